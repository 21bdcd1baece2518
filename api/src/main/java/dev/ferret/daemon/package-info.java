/**
 * The async daemon: its mode and settings, the status it reports, and the listeners it calls around each batch.
 */
package dev.ferret.daemon;
