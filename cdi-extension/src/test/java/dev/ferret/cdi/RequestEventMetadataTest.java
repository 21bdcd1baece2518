package dev.ferret.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The trace id a W3C traceparent header gives a request's events as their correlation id. */
class RequestEventMetadataTest {

    @Test
    void theTraceIdOfAWellFormedTraceparentAndNothingOtherwise() {
        assertThat(RequestEventMetadata.traceId("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
                .isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(RequestEventMetadata.traceId(" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 "))
                .isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(RequestEventMetadata.traceId("00-short-00f067aa0ba902b7-01")).isNull();
        assertThat(RequestEventMetadata.traceId("garbage")).isNull();
        assertThat(RequestEventMetadata.traceId(null)).isNull();
    }
}
