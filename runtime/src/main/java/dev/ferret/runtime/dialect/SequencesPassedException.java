package dev.ferret.runtime.dialect;

import java.sql.SQLTransientException;

/**
 * An append found that the high water mark had already passed a sequence number it drew: the detector saw the
 * number as a hole without an owner (the append had drawn it and not yet registered it, for longer than the
 * detector's grace) and recorded it as skipped. Committing would put an event where no projection looks, so the
 * append rolls back; retrying it draws new numbers. Transient for that reason.
 */
public final class SequencesPassedException extends SQLTransientException {

    public SequencesPassedException(long lowestSequence, long mark) {
        super("the high water mark (" + mark + ") passed sequence " + lowestSequence + " of this append before the"
                + " append registered it as in flight (the append stalled between its insert and its ownership"
                + " lock for longer than the detector waits); the append was rolled back, retry it");
    }
}
