package dev.ferret.runtime.dialect;

import java.io.Reader;

/**
 * Rows in the text format of PostgreSQL's {@code COPY ... FROM STDIN}: fields separated by tabs, rows ended by a
 * newline, {@code \N} for null. A value goes through whole: backslash, tab, newline and carriage return are escaped,
 * so no id or document can end a field or a row early. Owned by the thread that fills and copies it.
 */
public final class CopyRows {

    private final StringBuilder text = new StringBuilder();
    private boolean rowStarted;
    private int rows;

    /** Adds {@code value} (null: SQL null) as the current row's next field. */
    public CopyRows field(String value) {
        separate();
        if (value == null) {
            text.append("\\N");
            return this;
        }
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            switch (ch) {
                case '\\' -> text.append("\\\\");
                case '\t' -> text.append("\\t");
                case '\n' -> text.append("\\n");
                case '\r' -> text.append("\\r");
                default -> text.append(ch);
            }
        }
        return this;
    }

    /** Adds a number as the current row's next field. */
    public CopyRows field(long value) {
        separate();
        text.append(value);
        return this;
    }

    /** Ends the current row. */
    public CopyRows endRow() {
        text.append('\n');
        rowStarted = false;
        rows++;
        return this;
    }

    /** How many rows were ended. */
    public int rowCount() {
        return rows;
    }

    /** Every row ended so far, as the text the server reads. */
    public String text() {
        requireEnded();
        return text.toString();
    }

    /** {@link #text} as a reader over the rows as built, without a copy of them (a copy may hold 10,000 documents). */
    public Reader reader() {
        requireEnded();
        return new Reader() {
            private int next;

            @Override
            public int read(char[] buffer, int offset, int length) {
                if (next >= text.length()) {
                    return -1;
                }
                int count = Math.min(length, text.length() - next);
                text.getChars(next, next + count, buffer, offset);
                next += count;
                return count;
            }

            @Override
            public void close() {
                // nothing held
            }
        };
    }

    private void requireEnded() {
        if (rowStarted) {
            throw new IllegalStateException("a row was started and not ended");
        }
    }

    private void separate() {
        if (rowStarted) {
            text.append('\t');
        }
        rowStarted = true;
    }
}
