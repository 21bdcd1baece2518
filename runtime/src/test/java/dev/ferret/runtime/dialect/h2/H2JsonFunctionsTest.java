package dev.ferret.runtime.dialect.h2;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class H2JsonFunctionsTest {

    @Test
    void textOfEachJsonKindMatchesTheServersOperators() {
        String json = "{\"s\":\"x\",\"n\":42,\"d\":1.5,\"t\":true,\"f\":false,\"z\":null,\"o\":{\"a\":1},\"arr\":[1]}";
        assertThat(H2JsonFunctions.text(json, "s")).isEqualTo("x");
        assertThat(H2JsonFunctions.text(json, "n")).isEqualTo("42");
        assertThat(H2JsonFunctions.text(json, "d")).isEqualTo("1.5");
        assertThat(H2JsonFunctions.text(json, "t")).isEqualTo("true");
        assertThat(H2JsonFunctions.text(json, "f")).isEqualTo("false");
        assertThat(H2JsonFunctions.text(json, "z")).isNull();
        assertThat(H2JsonFunctions.text(json, "missing")).isNull();
        assertThat(H2JsonFunctions.text(json, "o")).isEqualTo("{\"a\":1}");
        assertThat(H2JsonFunctions.text("[1,2]", "s")).isNull();
        assertThat(H2JsonFunctions.text(null, "s")).isNull();
    }
}
