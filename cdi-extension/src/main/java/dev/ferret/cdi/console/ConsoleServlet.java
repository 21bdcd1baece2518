package dev.ferret.cdi.console;

import dev.ferret.FerretException;
import dev.ferret.cdi.FerretStoreLifecycle;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.DeadLetterEvent;
import dev.ferret.daemon.GapSkip;
import dev.ferret.daemon.HighWaterMarkStatus;
import dev.ferret.daemon.NonStaleTimeoutException;
import dev.ferret.daemon.ProjectionDaemon;
import dev.ferret.daemon.ShardState;
import dev.ferret.daemon.ShardStatus;
import dev.ferret.runtime.FerretDocumentStore;
import dev.ferret.runtime.daemon.AsyncDaemon;
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
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * The operator's console: one HTML page and the JSON endpoints it calls, which scripts may call too. Reads need the
 * operator or the viewer role (the container enforces it, see {@link ConsoleInitializer}); actions are POSTs that need
 * the operator role and the session's CSRF token in {@value #CSRF_HEADER}, and each is logged with its caller on the
 * {@value #AUDIT_LOGGER} logger.
 *
 * <p>Routes, under the console's path: {@code /} (the page), {@code GET /api/status},
 * {@code GET /api/dead-letters?shard=&after=&limit=}, and {@code POST /api/hold?shard=}, {@code /api/restart?shard=},
 * {@code /api/skip?shard=} (a shard paused on a refused event restarts past it, sending it to the dead letters),
 * {@code /api/rebuild?projection=[&tenant=]}, {@code /api/replay?shard=&id=}, {@code /api/discard?shard=&id=}.
 *
 * <p>Its state (rates and watched rebuilds) is owned by those two objects, each thread-safe; the servlet holds no
 * other mutable state.
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
    /** How long an action's request waits for a rebuild before answering that it goes on. */
    private static final Duration REBUILD_WAIT = Duration.ofMillis(500);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}");

    private final transient ConsoleSettings settings;
    private final transient ShardRates rates = new ShardRates();
    private final transient RebuildWatch rebuilds = new RebuildWatch();

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
            case "/api/status" -> withStore(resp, store -> json(resp, 200, status(req, store)));
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
        if (!List.of("hold", "restart", "skip", "rebuild", "replay", "discard").contains(action)) {
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
        void run(FerretDocumentStore store) throws IOException;
    }

    private void withStore(HttpServletResponse resp, StoreWork work) throws IOException {
        FerretDocumentStore store = CDI.current().select(FerretStoreLifecycle.class).get().storeIfStarted();
        if (store == null) {
            error(resp, 503, "the Ferret store is not started");
            return;
        }
        work.run(store);
    }

    private void act(HttpServletRequest req, HttpServletResponse resp, FerretDocumentStore store, String action,
                     String user) throws IOException {
        ProjectionDaemon daemon = store.daemon();
        String target = target(req);
        try {
            String outcome;
            switch (action) {
                case "hold" -> {
                    daemon.hold(required(req, "shard"));
                    outcome = "held";
                }
                case "restart" -> {
                    daemon.restart(required(req, "shard"));
                    outcome = "restarted";
                }
                case "skip" -> outcome = "restarted past sequence " + daemon.skipFailedEvent(required(req, "shard"))
                        + ", sent to the dead letters";
                case "rebuild" -> outcome = rebuild(req, store, user);
                case "replay" -> {
                    daemon.replayDeadLetter(required(req, "shard"), id(req));
                    outcome = "applied again";
                }
                default -> outcome = daemon.discardDeadLetter(required(req, "shard"), id(req)) ? "discarded"
                        : "already gone";
            }
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

    private String rebuild(HttpServletRequest req, FerretDocumentStore store, String user) {
        String projection = required(req, "projection");
        String tenant = req.getParameter("tenant");
        boolean forTenant = tenant != null && !tenant.isBlank();
        AsyncDaemon daemon = (AsyncDaemon) store.daemon();
        Map<String, String> projections = daemon.projectionsOfShards();
        if (!projections.containsValue(projection)) {
            throw new IllegalArgumentException("no async projection named '" + projection + "'");
        }
        String label = forTenant ? projection + " (tenant " + tenant + ")" : projection;
        try {
            if (forTenant) {
                daemon.rebuild(projection, tenant, REBUILD_WAIT, p -> { });
            } else {
                daemon.rebuild(projection, REBUILD_WAIT);
            }
        } catch (NonStaleTimeoutException e) {
            watch(daemon, projections, projection, tenant, label, user);
            return "started: it goes on in the background";
        }
        watch(daemon, projections, projection, tenant, label, user);
        return "done";
    }

    private void watch(AsyncDaemon daemon, Map<String, String> projections, String projection, String tenant,
                       String label, String user) {
        List<ShardStatus> shards = daemon.status().shards().stream()
                .filter(s -> projection.equals(projections.get(s.name())))
                .filter(s -> tenant == null || tenant.isBlank() || s.name().endsWith("@" + tenant))
                .toList();
        rebuilds.started(label, shards, System.nanoTime(), user);
    }

    private JsonObject status(HttpServletRequest req, FerretDocumentStore store) {
        AsyncDaemon daemon = (AsyncDaemon) store.daemon();
        DaemonStatus status = daemon.status();
        long now = System.nanoTime();
        Map<String, Long> deadLetters = daemon.deadLetterCounts();
        Map<String, String> projections = daemon.projectionsOfShards();
        Set<String> here = daemon.ownedShards();
        Map<String, ShardStatus> byName = new HashMap<>();
        JsonArrayBuilder shards = Json.createArrayBuilder();
        for (ShardStatus shard : status.shards()) {
            byName.put(shard.name(), shard);
            ShardRates.Rate rate = rates.sample(shard.name(), shard.progression(), now);
            JsonArrayBuilder history = Json.createArrayBuilder();
            rate.history().forEach(history::add);
            JsonObjectBuilder row = Json.createObjectBuilder()
                    .add("name", shard.name())
                    .add("projection", projections.getOrDefault(shard.name(), shard.name()))
                    .add("state", shard.state().name())
                    .add("runsHere", here.contains(shard.name()))
                    .add("progression", shard.progression())
                    .add("highWaterMark", shard.highWaterMark())
                    .add("lag", shard.lag())
                    .add("eventsPerSecond", rate.perSecond())
                    .add("rateHistory", history)
                    .add("stalledForMillis", shard.stalledFor().toMillis())
                    .add("deadLetters", deadLetters.getOrDefault(shard.name(), 0L))
                    .add("retrying", shard.state() == ShardState.RETRYING);
            if (shard.sinceLastCommit() != null) {
                row.add("sinceLastCommitMillis", shard.sinceLastCommit().toMillis());
            }
            if (shard.error() != null) {
                row.add("errorType", shard.error().getClass().getName())
                        .add("error", String.valueOf(shard.error().getMessage()));
            }
            shards.add(row);
        }
        rates.retain(byName.keySet());
        JsonArrayBuilder rebuilding = Json.createArrayBuilder();
        for (RebuildWatch.Progress p : rebuilds.progress(byName, now)) {
            rebuilding.add(Json.createObjectBuilder().add("label", p.label()).add("startedBy", p.startedBy())
                    .add("state", p.state()).add("done", p.done()).add("total", p.total())
                    .add("eventsPerSecond", p.perSecond()).add("secondsLeft", p.secondsLeft()));
        }
        JsonArrayBuilder nodes = Json.createArrayBuilder();
        daemon.nodes().forEach((name, age) -> nodes.add(Json.createObjectBuilder().add("name", name)
                .add("heartbeatAgeMillis", age.toMillis()).add("self", name.equals(daemon.nodeName()))));
        JsonArrayBuilder problems = Json.createArrayBuilder();
        status.livenessProblems().forEach(problems::add);
        return Json.createObjectBuilder()
                .add("mode", status.mode().name())
                .add("running", status.running())
                .add("healthy", status.healthy())
                .add("live", status.live())
                .add("livenessProblems", problems)
                .add("node", daemon.nodeName())
                .add("nodes", nodes)
                .add("highWaterMark", mark(status.highWaterMark()))
                .add("shards", shards)
                .add("rebuilds", rebuilding)
                .add("session", session(req))
                .build();
    }

    private static JsonObjectBuilder mark(HighWaterMarkStatus mark) {
        JsonArrayBuilder skips = Json.createArrayBuilder();
        for (GapSkip skip : mark.recentSkips()) {
            skips.add(Json.createObjectBuilder().add("from", skip.fromSequence()).add("to", skip.toSequence())
                    .add("reason", String.valueOf(skip.reason())).add("at", String.valueOf(skip.at())));
        }
        JsonObjectBuilder json = Json.createObjectBuilder()
                .add("mark", mark.mark())
                .add("highestSeen", mark.highestSeen())
                .add("healthy", mark.healthy())
                .add("stalledForMillis", mark.stalledFor() == null ? 0 : mark.stalledFor().toMillis())
                .add("totalSkips", mark.totalSkips())
                .add("totalSkippedSequences", mark.totalSkippedSequences())
                .add("recentSkips", skips);
        if (mark.error() != null) {
            json.add("error", String.valueOf(mark.error().getMessage()));
        }
        return json;
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

    private JsonObject deadLetters(HttpServletRequest req, FerretDocumentStore store) {
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
