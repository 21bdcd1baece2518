package dev.ferret.sample;

import dev.ferret.DocumentStore;
import dev.ferret.daemon.DaemonStatus;
import dev.ferret.daemon.ShardStatus;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The daemon's status: as JSON, and as an HTML page a person can read. */
@Path("status")
@RequestScoped
public class StatusResource {

    @Inject
    DocumentStore store;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, Object> json() {
        DaemonStatus status = store.daemon().status();
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("mode", status.mode().name());
        result.put("running", status.running());
        result.put("healthy", status.healthy());
        result.put("highWaterMark", status.highWaterMark().mark());
        result.put("highestSeen", status.highWaterMark().highestSeen());
        List<Map<String, Object>> shards = new ArrayList<>();
        for (ShardStatus shard : status.shards()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("name", shard.name());
            s.put("state", shard.state().name());
            s.put("progression", shard.progression());
            s.put("lag", shard.lag());
            s.put("error", shard.error() == null ? null : shard.error().toString());
            shards.add(s);
        }
        result.put("shards", shards);
        return result;
    }

    @GET
    @Produces(MediaType.TEXT_HTML)
    public String html() {
        DaemonStatus status = store.daemon().status();
        StringBuilder html = new StringBuilder(2048);
        html.append("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta http-equiv=\"refresh\" content=\"2\"><title>Ferret daemon</title><style>")
                .append("body{font-family:system-ui,sans-serif;margin:2rem;color:#222}")
                .append("table{border-collapse:collapse;min-width:40rem}th,td{padding:.4rem .8rem;text-align:left;")
                .append("border-bottom:1px solid #ddd}th{background:#f4f4f4}.RUNNING{color:#17702b}")
                .append(".PAUSED,.RETRYING{color:#b00020;font-weight:bold}.STOPPED{color:#777}")
                .append("td.num{text-align:right;font-variant-numeric:tabular-nums}")
                .append("</style></head><body><h1>Ferret daemon</h1>");
        html.append("<p>Mode <b>").append(status.mode()).append("</b>, ")
                .append(status.running() ? "running" : "not running").append(", ")
                .append(status.healthy() ? "healthy" : "<span class=\"PAUSED\">unhealthy</span>")
                .append(". High water mark <b id=\"mark\">").append(status.highWaterMark().mark())
                .append("</b> (highest sequence seen ").append(status.highWaterMark().highestSeen()).append(")");
        if (status.highWaterMark().stalled()) {
            html.append(", <span class=\"PAUSED\">stalled for ").append(status.highWaterMark().stalledFor())
                    .append("</span>");
        }
        html.append(".</p><table id=\"shards\"><thead><tr><th>shard</th><th>state</th><th>progression</th>")
                .append("<th>lag</th><th>progress</th><th>error</th></tr></thead><tbody>");
        for (ShardStatus shard : status.shards()) {
            long mark = Math.max(1, shard.highWaterMark());
            long percent = shard.highWaterMark() <= 0 ? 100 : Math.min(100, shard.progression() * 100 / mark);
            html.append("<tr class=\"shard\"><td>").append(escape(shard.name())).append("</td><td class=\"")
                    .append(shard.state()).append("\">").append(shard.state()).append("</td><td class=\"num\">")
                    .append(shard.progression()).append("</td><td class=\"num\">").append(shard.lag())
                    .append("</td><td><progress max=\"100\" value=\"").append(percent).append("\"></progress> ")
                    .append(percent).append("%</td><td>")
                    .append(shard.error() == null ? "" : escape(shard.error().toString())).append("</td></tr>");
        }
        html.append("</tbody></table><p><small>Refreshes every 2 s. JSON: <a href=\"status\">api/status</a> with")
                .append(" Accept: application/json; health: <a href=\"/health\">/health</a>.</small></p>")
                .append("</body></html>");
        return html.toString();
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
