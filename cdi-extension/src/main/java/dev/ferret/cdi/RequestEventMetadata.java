package dev.ferret.cdi;

import dev.ferret.EventMetadata;
import dev.ferret.EventMetadataSource;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.logging.Logger;

/**
 * The extension's default {@link EventMetadataSource}: a session opened while an HTTP request is being served takes
 * its correlation id from the request's {@value #CORRELATION_HEADER} header, else its {@value #REQUEST_ID_HEADER}
 * header, else the trace id of its W3C {@value #TRACEPARENT_HEADER}; and the caller's name, when the request is
 * authenticated, as the header {@value #USER}. Outside a request (a daemon thread, a timer, a message) it gives
 * nothing. A value that does not fit an id (blank, or over 250 characters) is left out rather than failing the
 * request. Stateless; called on the thread that opens a session.
 *
 * <p>It needs the Servlet API visible to the application (on Open Liberty, a {@code servlet} feature: REST alone does
 * not expose it). Without it the store gets no default metadata, and nothing of this class that names a Servlet type
 * is run: the extension's own beans never name one, so the deployment does not depend on it.
 */
final class RequestEventMetadata implements EventMetadataSource {

    static final String CORRELATION_HEADER = "X-Correlation-ID";
    static final String REQUEST_ID_HEADER = "X-Request-ID";
    static final String TRACEPARENT_HEADER = "traceparent";
    static final String USER = "user";
    private static final Logger LOG = Logger.getLogger(RequestEventMetadata.class.getName());

    private final Instance<HttpServletRequest> requests;

    RequestEventMetadata(Instance<HttpServletRequest> requests) {
        this.requests = requests;
    }

    /** This source when the application sees the Servlet API, else one that gives nothing. */
    static EventMetadataSource ifServletApiVisible() {
        try {
            Class.forName("jakarta.servlet.http.HttpServletRequest", false,
                    Thread.currentThread().getContextClassLoader());
        } catch (ClassNotFoundException | LinkageError absent) {
            LOG.info("Ferret: the Servlet API is not visible to this application, so sessions take no correlation id"
                    + " from HTTP requests (on Open Liberty, enable a servlet feature)");
            return EventMetadataSource.NONE;
        }
        return new RequestEventMetadata(CDI.current().select(HttpServletRequest.class));
    }

    @Override
    public EventMetadata current() {
        HttpServletRequest request;
        String correlation;
        Principal caller;
        try {
            if (!requests.isResolvable()) {
                return EventMetadata.NONE;
            }
            request = requests.get();
            correlation = correlationOf(request);
            caller = request.getUserPrincipal();
        } catch (RuntimeException notInARequest) {
            // the built-in request bean throws when no request is active on this thread
            return EventMetadata.NONE;
        }
        EventMetadata metadata = EventMetadata.NONE;
        if (fits(correlation)) {
            metadata = metadata.withCorrelationId(correlation);
        }
        if (caller != null && caller.getName() != null && !caller.getName().isBlank()) {
            metadata = metadata.withHeader(USER, caller.getName());
        }
        return metadata;
    }

    private static String correlationOf(HttpServletRequest request) {
        String given = request.getHeader(CORRELATION_HEADER);
        if (given == null) {
            given = request.getHeader(REQUEST_ID_HEADER);
        }
        if (given == null) {
            given = traceId(request.getHeader(TRACEPARENT_HEADER));
        }
        return given;
    }

    /** The trace id of a {@code version-traceid-parentid-flags} header, or null when it has another shape. */
    static String traceId(String traceparent) {
        if (traceparent == null) {
            return null;
        }
        String[] parts = traceparent.trim().split("-");
        return parts.length >= 4 && parts[1].length() == 32 ? parts[1] : null;
    }

    private static boolean fits(String id) {
        return id != null && !id.isBlank() && id.length() <= 250 && !id.endsWith(" ");
    }
}
