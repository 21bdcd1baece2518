/**
 * Ferret's public API: a {@link dev.ferret.DocumentStore} of JSON documents and an append-only event log,
 * opened as {@link dev.ferret.QuerySession read} or {@link dev.ferret.DocumentSession write} sessions.
 *
 * <p>Everything here is an interface, a value type or an exception; the implementation lives in
 * {@code ferret-runtime}.
 */
package dev.ferret;
