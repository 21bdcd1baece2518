package dev.ferret.runtime.dialect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.Reader;
import org.junit.jupiter.api.Test;

class CopyRowsTest {

    @Test
    void fieldsAreTabSeparatedAndRowsNewlineEnded() {
        CopyRows rows = new CopyRows().field("a").field(1).field("b").endRow().field("c").field(2).field("d").endRow();
        assertThat(rows.text()).isEqualTo("a\t1\tb\nc\t2\td\n");
        assertThat(rows.rowCount()).isEqualTo(2);
    }

    @Test
    void backslashTabNewlineAndCarriageReturnAreEscapedSoNoValueEndsAFieldOrRowEarly() {
        CopyRows rows = new CopyRows().field("a\\b\tc\nd\re").field("\\N").field("\\.").endRow();
        assertThat(rows.text()).isEqualTo("a\\\\b\\tc\\nd\\re\t\\\\N\t\\\\.\n");
    }

    @Test
    void nullIsTheNullMarkerAndAnEmptyStringStaysEmpty() {
        assertThat(new CopyRows().field((String) null).field("").field("x").endRow().text())
                .isEqualTo("\\N\t\tx\n");
    }

    @Test
    void otherCharactersPassUnchanged() {
        String text = "{\"k\":\"é 🦦 ' ; --\"}";
        assertThat(new CopyRows().field(text).endRow().text()).isEqualTo(text + "\n");
    }

    @Test
    void aRowStartedAndNotEndedIsRefused() {
        CopyRows rows = new CopyRows().field("a").endRow().field("b");
        assertThatThrownBy(rows::text).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void theReaderGivesTheSameTextInAnyChunks() throws Exception {
        CopyRows rows = new CopyRows();
        for (int i = 0; i < 500; i++) {
            rows.field("id-" + i).field("a\tb").field(i).endRow();
        }
        StringBuilder read = new StringBuilder();
        try (Reader reader = rows.reader()) {
            char[] buffer = new char[7];
            for (int n = reader.read(buffer, 0, buffer.length); n >= 0; n = reader.read(buffer, 0, buffer.length)) {
                read.append(buffer, 0, n);
            }
        }
        assertThat(read.toString()).isEqualTo(rows.text());
    }
}
