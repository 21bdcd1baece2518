package dev.ferret.cdi.console;

import dev.ferret.DocumentStore;
import dev.ferret.FerretException;
import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.ShardQuery;
import jakarta.enterprise.inject.spi.CDI;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.Principal;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The operator's console: one HTML page and the JSON endpoints it calls, which scripts may call too. Reads need the
 * operator or the viewer role (the container enforces it, see {@link ConsoleInitializer}); actions are POSTs that need
 * the operator role and the session's CSRF token in {@value #CSRF_HEADER}, and each is logged with its caller on the
 * {@value #AUDIT_LOGGER} logger.
 *
 * <p>Routes, under the console's path: {@code /} (the page),
 * {@code GET /api/status?projection=&tenant=&database=&state=&offset=&limit=} (every filter optional; see
 * {@link ConsoleQueries}),
 * {@code GET /api/dead-letters?shard=&after=&limit=}, and {@code POST /api/hold?shard=}, {@code /api/restart?shard=},
 * {@code /api/skip?shard=} (a shard paused on a refused event restarts past it, sending it to the dead letters),
 * {@code /api/rebuild?projection=[&tenant=]}, {@code /api/replay?shard=&id=}, {@code /api/discard?shard=&id=}.
 *
 * <p>This class routes, checks roles and CSRF tokens and audits; {@link ConsoleStatus} renders the status and
 * {@link ConsoleActions} runs the verbs, both through the daemon's public API. Its state (rates and watched
 * rebuilds) is owned by {@link ShardRates} and {@link RebuildWatch}, each thread-safe; the servlet holds no other
 * mutable state.
 */
final class ConsoleServlet extends HttpServlet {

    static final String CSRF_HEADER = "X-Ferret-CSRF";
    static final String AUDIT_LOGGER = "dev.ferret.console.audit";

    private static final long serialVersionUID = 1L;
    private static final Logger AUDIT = Logger.getLogger(AUDIT_LOGGER);
    private static final Logger LOG = Logger.getLogger(ConsoleServlet.class.getName());
    private static final String CSRF_ATTRIBUTE = ConsoleServlet.class.getName() + ".csrf";
    private static final int MAX_DEAD_LETTERS = 200;
    static final int MAX_EVENT_JSON = 16_384;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}");

    private final transient ConsoleSettings settings;
    private final transient RebuildWatch rebuilds = new RebuildWatch();
    private final transient ConsoleStatus status = new ConsoleStatus(new ShardRates(), rebuilds);
    private final transient ConsoleActions actions = new ConsoleActions(rebuilds);

    /** Why the console refuses every request (its deployment is misconfigured); null while it serves. */
    private volatile String refusal;

    ConsoleServlet(ConsoleSettings settings) {
        this.settings = settings;
    }

    /**
     * From here on every request is answered 503 naming {@code why}: for a server that keeps the application
     * running after its initializer failed (Open Liberty logs it and starts the application), so that the console
     * stays closed rather than serve under a constraint it did not choose.
     */
    void refuseAll(String why) {
        refusal = why;
    }

    /**
     * Every answer is framed by nobody and never sniffed; every request, read or action, needs one of the console's
     * roles, checked here in code whatever the container's constraints say (a server without application security,
     * a {@code web.xml} that overrides them); TRACE and OPTIONS are refused.
     */
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        resp.setHeader("X-Frame-Options", "DENY");
        resp.setHeader("X-Content-Type-Options", "nosniff");
        resp.setHeader("Content-Security-Policy", "frame-ancestors 'none'");
        String why = refusal;
        if (why != null) {
            error(resp, 503, why);
            return;
        }
        String method = req.getMethod();
        if ("TRACE".equals(method) || "OPTIONS".equals(method)) {
            error(resp, 405, "the console takes GET and POST only");
            return;
        }
        if (!req.isUserInRole(settings.operatorRole()) && !req.isUserInRole(settings.viewerRole())) {
            String user = user(req);
            AUDIT.warning(() -> "Ferret console: " + escaped(user) + " was refused " + method + " "
                    + escaped(route(req)) + ": in neither role " + settings.operatorRole() + " nor "
                    + settings.viewerRole());
            error(resp, req.getUserPrincipal() == null ? 401 : 403, "the console needs the role "
                    + settings.viewerRole() + " (or " + settings.operatorRole() + " for its actions)");
            return;
        }
        super.service(req, resp);
    }

    /** A value for an audit line, control characters replaced: no caller or message can forge a line. */
    static String escaped(String value) {
        return value == null ? "null" : CONTROL.matcher(value).replaceAll("?");
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String route = route(req);
        switch (route) {
            case "" -> resp.sendRedirect(req.getContextPath() + settings.path() + "/");
            case "/", "/index.html" -> page(resp);
            case "/console.js" -> script(resp);
            case "/api/status" -> withStore(resp, store -> {
                ShardQuery query;
                try {
                    query = ConsoleQueries.shardQuery(req::getParameter);
                } catch (IllegalArgumentException e) {
                    error(resp, 400, e.getMessage());
                    return;
                }
                json(resp, 200, status.render(store.daemon(), query, session(req)).build());
            });
            case "/api/dead-letters" -> withStore(resp, store -> {
                try {
                    json(resp, 200, deadLetters(req, store));
                } catch (IllegalArgumentException e) {
                    error(resp, 400, e.getMessage());
                }
            });
            default -> error(resp, 404, "no console page " + route);
        }
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String route = route(req);
        String action = route.startsWith("/api/") ? route.substring("/api/".length()) : "";
        if (!ConsoleActions.NAMES.contains(action)) {
            error(resp, 404, "no console action " + route);
            return;
        }
        String user = user(req);
        if (!req.isUserInRole(settings.operatorRole())) {
            AUDIT.warning(() -> "Ferret console: " + escaped(user) + " was refused " + action + " " + target(req)
                    + ": not in role " + settings.operatorRole());
            error(resp, 403, "the console's actions need the role " + settings.operatorRole());
            return;
        }
        if (!csrfMatches(req)) {
            AUDIT.warning(() -> "Ferret console: " + escaped(user) + " was refused " + action + " " + target(req)
                    + ": no valid CSRF token");
            error(resp, 403, "a console action needs the session's CSRF token in the " + CSRF_HEADER + " header");
            return;
        }
        withStore(resp, store -> act(req, resp, store, action, user));
    }

    @Override
    protected void doPut(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        error(resp, 405, "the console takes GET and POST only");
    }

    @Override
    protected void doDelete(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        error(resp, 405, "the console takes GET and POST only");
    }

    private static String route(HttpServletRequest req) {
        String info = req.getPathInfo();
        return info == null ? "" : info;
    }

    private interface StoreWork {
        void run(DocumentStore store) throws IOException;
    }

    private void withStore(HttpServletResponse resp, StoreWork work) throws IOException {
        DocumentStore store = CDI.current().select(FerretStoreLifecycle.class).get().storeIfStarted();
        if (store == null) {
            error(resp, 503, "the Ferret store is not started");
            return;
        }
        work.run(store);
    }

    private void act(HttpServletRequest req, HttpServletResponse resp, DocumentStore store, String action,
                     String user) throws IOException {
        String target = target(req);
        try {
            String outcome = actions.run(store.daemon(), action, req::getParameter, name -> required(req, name),
                    ConsoleActions.needsId(action) ? id(req) : -1, user);
            AUDIT.info(() -> "Ferret console: " + escaped(user) + " ran " + action + " " + target + ": "
                    + escaped(outcome));
            json(resp, action.equals("rebuild") && outcome.startsWith("started") ? 202 : 200,
                    Json.createObjectBuilder().add("action", action).add("outcome", outcome).build());
        } catch (IllegalArgumentException e) {
            AUDIT.info(() -> "Ferret console: " + user + " ran " + action + " " + target + ": refused, "
                    + escaped(e.getMessage()));
            error(resp, 400, e.getMessage());
        } catch (IllegalStateException e) {
            AUDIT.info(() -> "Ferret console: " + user + " ran " + action + " " + target + ": refused, "
                    + escaped(e.getMessage()));
            error(resp, 409, e.getMessage());
        } catch (FerretException e) {
            AUDIT.info(() -> "Ferret console: " + user + " ran " + action + " " + target + ": failed, "
                    + escaped(e.getMessage()));
            LOG.log(Level.FINE, "Console action " + action + " failed", e);
            error(resp, 422, e.getMessage());
        }
    }

    private JsonObjectBuilder session(HttpServletRequest req) {
        HttpSession session = req.getSession(true);
        String token = (String) session.getAttribute(CSRF_ATTRIBUTE);
        if (token == null) {
            byte[] bytes = new byte[32];
            RANDOM.nextBytes(bytes);
            token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
            session.setAttribute(CSRF_ATTRIBUTE, token);
        }
        return Json.createObjectBuilder().add("user", user(req))
                .add("operator", req.isUserInRole(settings.operatorRole())).add("csrfToken", token);
    }

    private JsonObject deadLetters(HttpServletRequest req, DocumentStore store) {
        String shard = required(req, "shard");
        long after = longParameter(req, "after", 0);
        int limit = (int) Math.min(MAX_DEAD_LETTERS, longParameter(req, "limit", 50));
        List<DeadLetterEvent> page = store.daemon().deadLetters(shard, after, Math.max(1, limit));
        JsonArrayBuilder rows = Json.createArrayBuilder();
        for (DeadLetterEvent dead : page) {
            JsonObjectBuilder row = Json.createObjectBuilder().add("id", dead.id()).add("sequence", dead.sequence())
                    .add("eventType", dead.eventType()).add("tenantId", dead.tenantId())
                    .add("errorType", dead.errorType()).add("message", String.valueOf(dead.message()))
                    .add("failedAt", String.valueOf(dead.failedAt()));
            row.add("streamId", dead.streamId() == null ? "" : dead.streamId());
            row.add("eventJson", capped(dead.eventJson()));
            rows.add(row);
        }
        // event payloads of any tenant: who read which, for the audit trail
        String user = user(req);
        AUDIT.info(() -> "Ferret console: " + escaped(user) + " read " + page.size() + " dead letters of shard "
                + escaped(shard) + " after id " + after);
        return Json.createObjectBuilder().add("shard", shard).add("deadLetters", rows).build();
    }

    /** An event's JSON for the page, at most {@value #MAX_EVENT_JSON} characters, a cut one saying so. */
    static String capped(String json) {
        if (json == null) {
            return "";
        }
        return json.length() <= MAX_EVENT_JSON ? json : json.substring(0, MAX_EVENT_JSON) + "… (cut: "
                + json.length() + " characters in all; read the event from the store)";
    }

    private static boolean csrfMatches(HttpServletRequest req) {
        HttpSession session = req.getSession(false);
        String expected = session == null ? null : (String) session.getAttribute(CSRF_ATTRIBUTE);
        String given = req.getHeader(CSRF_HEADER);
        return expected != null && given != null && MessageDigest.isEqual(
                expected.getBytes(StandardCharsets.US_ASCII), given.getBytes(StandardCharsets.US_ASCII));
    }

    private static String user(HttpServletRequest req) {
        Principal principal = req.getUserPrincipal();
        return principal == null ? "anonymous" : principal.getName();
    }

    /** The action's parameters for the audit line, control characters replaced: a caller cannot forge a line. */
    private static String target(HttpServletRequest req) {
        StringBuilder target = new StringBuilder();
        for (String name : List.of("projection", "tenant", "shard", "id")) {
            String value = req.getParameter(name);
            if (value != null) {
                target.append(target.length() == 0 ? "" : " ").append(name).append('=')
                        .append(escaped(value));
            }
        }
        return target.toString();
    }

    private static String required(HttpServletRequest req, String name) {
        String value = req.getParameter(name);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("the parameter '" + name + "' is required");
        }
        return value;
    }

    private static long id(HttpServletRequest req) {
        return longParameter(req, "id", -1);
    }

    private static long longParameter(HttpServletRequest req, String name, long fallback) {
        String value = req.getParameter(name);
        if (value == null || value.isBlank()) {
            if (fallback < 0) {
                throw new IllegalArgumentException("the parameter '" + name + "' is required");
            }
            return fallback;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the parameter '" + name + "' must be a number, not '" + value + "'");
        }
    }

    private static void page(HttpServletResponse resp) throws IOException {
        resource(resp, "console.html", "text/html;charset=UTF-8");
    }

    private static void script(HttpServletResponse resp) throws IOException {
        resource(resp, "console.js", "text/javascript;charset=UTF-8");
    }

    /** One of the console's own files; scripts only from the console itself, none inline. */
    private static void resource(HttpServletResponse resp, String name, String contentType) throws IOException {
        try (InputStream content = ConsoleServlet.class.getResourceAsStream(name)) {
            if (content == null) {
                throw new IOException(name + " is missing from the extension's jar");
            }
            resp.setContentType(contentType);
            resp.setHeader("Cache-Control", "no-store");
            resp.setHeader("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline';"
                    + " script-src 'self'; frame-ancestors 'none'");
            resp.setHeader("X-Content-Type-Options", "nosniff");
            content.transferTo(resp.getOutputStream());
        }
    }

    private static void json(HttpServletResponse resp, int code, JsonObject body) throws IOException {
        resp.setStatus(code);
        resp.setContentType("application/json;charset=UTF-8");
        resp.setHeader("Cache-Control", "no-store");
        resp.getWriter().write(body.toString());
    }

    private static void error(HttpServletResponse resp, int code, String message) throws IOException {
        json(resp, code, Json.createObjectBuilder().add("error", String.valueOf(message)).build());
    }
}
