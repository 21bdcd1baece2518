/**
 * Projections fold events into documents: {@link dev.ferret.projections.Snapshot} (one document per stream),
 * {@link dev.ferret.projections.MultiStreamProjection} (events routed to documents by id) and
 * {@link dev.ferret.projections.EventProjection} (any document operations per event).
 */
package dev.ferret.projections;
