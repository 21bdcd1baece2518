package dev.ferret.cdi.console;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.security.Principal;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * The console checks the caller's role in code on every request, so it stays closed where the container's own
 * constraint is missing: a server without application security lets every request reach the servlet, as here.
 */
class ConsoleServletAccessTest {

    private final ConsoleServlet servlet = new ConsoleServlet(new ConsoleSettings(true, "/ferret-console",
            "ferret-operator", "ferret-viewer", true));

    /** What the servlet answered: status and headers. */
    private static final class Answer {
        int status = 200;
        final Map<String, String> headers = new HashMap<>();
        final StringWriter body = new StringWriter();
    }

    private Answer call(String method, String path, String user, Set<String> roles) throws Exception {
        Principal principal = user == null ? null : () -> user;
        HttpServletRequest request = (HttpServletRequest) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {HttpServletRequest.class}, (proxy, m, args) -> switch (m.getName()) {
                    case "getMethod" -> method;
                    case "getPathInfo" -> path;
                    case "getContextPath" -> "/app";
                    case "isUserInRole" -> roles.contains((String) args[0]);
                    case "getUserPrincipal" -> principal;
                    case "getProtocol" -> "HTTP/1.1";
                    default -> null;
                });
        Answer answer = new Answer();
        HttpServletResponse response = (HttpServletResponse) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {HttpServletResponse.class}, (proxy, m, args) -> {
                    switch (m.getName()) {
                        case "setStatus", "sendError" -> answer.status = (int) args[0];
                        case "setHeader" -> answer.headers.put((String) args[0], (String) args[1]);
                        case "getWriter" -> {
                            return new PrintWriter(answer.body);
                        }
                        default -> {
                        }
                    }
                    return null;
                });
        servlet.service(request, response);
        return answer;
    }

    @Test
    void everyReadIsRefusedToAnonymousCallersAndToCallersInNeitherRole() throws Exception {
        for (String path : new String[] {"/", "/api/status", "/api/dead-letters"}) {
            Answer anonymous = call("GET", path, null, Set.of());
            assertThat(anonymous.status).as("anonymous GET %s", path).isEqualTo(401);
            Answer stranger = call("GET", path, "mallory", Set.of("users"));
            assertThat(stranger.status).as("GET %s without a console role", path).isEqualTo(403);
            assertThat(stranger.headers).containsEntry("X-Frame-Options", "DENY")
                    .containsEntry("X-Content-Type-Options", "nosniff");
        }
        assertThat(call("POST", "/api/hold", "mallory", Set.of()).status).isEqualTo(403);
    }

    @Test
    void aConsoleWhoseDeploymentIsMisconfiguredRefusesEveryoneNamingWhy() throws Exception {
        servlet.refuseAll("Ferret console: the application's web.xml declares a security constraint for [x]");
        Answer operator = call("GET", "/api/status", "olga", Set.of("ferret-operator"));
        assertThat(operator.status).isEqualTo(503);
        assertThat(operator.body.toString()).contains("declares a security constraint");
    }

    @Test
    void traceAndOptionsAreRefusedEvenToAnOperator() throws Exception {
        assertThat(call("TRACE", "/api/status", "olga", Set.of("ferret-operator")).status).isEqualTo(405);
        assertThat(call("OPTIONS", "/api/status", "olga", Set.of("ferret-operator")).status).isEqualTo(405);
    }

    @Test
    void aRefusalsAuditLineEscapesTheCallersNameAndPath() throws Exception {
        StringBuilder lines = new StringBuilder();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                lines.append(record.getMessage()).append('\n');
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger audit = Logger.getLogger(ConsoleServlet.AUDIT_LOGGER);
        audit.addHandler(capture);
        try {
            call("GET", "/api/status\nFerret console: admin ran rebuild", "eve\r\nforged", Set.of());
        } finally {
            audit.removeHandler(capture);
        }
        assertThat(lines.toString()).hasLineCount(1).contains("eve??forged")
                .contains("/api/status?Ferret console: admin ran rebuild");
    }
}
