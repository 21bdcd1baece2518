package dev.ferret.it.pg;

import dev.ferret.DatabaseEngine;
import dev.ferret.DocumentSession;
import dev.ferret.DocumentStore;
import dev.ferret.QuerySession;
import dev.ferret.runtime.engines.Dialects;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** What PostgresContainerIT drives: readings appended over many meters, totals read, and what a page can copy. */
@Path("/")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class MeterResource {

    @ApplicationPath("/api")
    public static class App extends Application {
    }

    @Inject
    DocumentStore store;

    @Inject
    @ConfigProperty(name = "ferret.datasource")
    String dataSourceName;

    /** {@code count} readings on each of {@code meters} meters named {@code prefix-i}, in one save. */
    @POST
    @Path("readings")
    public Response append(@QueryParam("prefix") String prefix, @QueryParam("meters") int meters,
                           @QueryParam("count") @DefaultValue("1") int count, @QueryParam("note") String note) {
        try (DocumentSession session = store.openSession()) {
            for (int m = 0; m < meters; m++) {
                for (int i = 1; i <= count; i++) {
                    session.events().append(prefix + "-" + m, new Reading(i, note));
                }
            }
            session.saveChanges();
        }
        return Response.accepted().build();
    }

    /** Every meter of {@code prefix}, once the daemon has caught up. */
    @GET
    @Path("totals")
    public List<MeterTotal> totals(@QueryParam("prefix") String prefix) {
        store.waitForNonStaleProjectionData(Duration.ofSeconds(60));
        try (QuerySession session = store.querySession()) {
            return session.query(MeterTotal.class).toList().stream()
                    .filter(total -> total.id().startsWith(prefix + "-")).toList();
        }
    }

    /**
     * Whether the PostgreSQL dialect reaches the driver's copy API on a connection of the data source the store
     * uses: the server's wrapper must unwrap to the driver's own connection, and its classes be the ones Ferret sees.
     */
    @GET
    @Path("copies")
    public Map<String, Object> copies() throws NamingException, SQLException {
        DataSource dataSource = (DataSource) new InitialContext().lookup(dataSourceName);
        Map<String, Object> answer = new LinkedHashMap<>();
        try (Connection connection = dataSource.getConnection()) {
            answer.put("product", connection.getMetaData().getDatabaseProductName());
            answer.put("copies", Dialects.of(DatabaseEngine.POSTGRESQL).bulkCopy()
                    .map(copy -> copy.supports(connection)).orElse(false));
        }
        return answer;
    }
}
