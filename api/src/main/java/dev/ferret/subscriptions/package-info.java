/**
 * Subscriptions: daemon shards that hand each page of events to your code instead of a projection. Same ordered,
 * at-least-once delivery and progress bookkeeping as projections; none of their rebuild guarantees.
 */
package dev.ferret.subscriptions;
