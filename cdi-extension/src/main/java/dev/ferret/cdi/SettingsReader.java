package dev.ferret.cdi;

import dev.ferret.ConfigurationException;
import dev.ferret.StoreOptions;
import dev.ferret.daemon.Setting;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Reads the configuration for {@link FerretSettings#read}: typed values through the lookup, each setting's call on
 * {@code StoreOptions} kept to replay, and every value it cannot read recorded as a problem naming its key and value,
 * never thrown. Used once, on the thread that reads the configuration.
 */
final class SettingsReader {

    private final Function<String, Optional<String>> lookup;
    // read by FerretSettings once the reading is done
    final List<String> problems = new ArrayList<>();
    final List<Consumer<StoreOptions>> options = new ArrayList<>();
    final Map<String, String> eventTypes = new LinkedHashMap<>();
    final List<FerretSettings.TenancyDatabase> tenancyDatabases = new ArrayList<>();
    private final StoreOptions probe = new StoreOptions();
    String dataSource;
    String replicaDataSource;
    FerretSettings.Transactions transactions;
    boolean joinCallersTransaction;
    String managedExecutor;
    String managedScheduledExecutor;
    boolean longRunningHint;

    SettingsReader(Function<String, Optional<String>> lookup) {
        this.lookup = lookup;
    }

    private void refuse(String key, String value, String why) {
        problems.add("Ferret configuration: " + key + "=" + value + " is refused: " + why);
    }

    Optional<String> string(String key) {
        return lookup.apply(key).map(String::trim).filter(s -> !s.isEmpty());
    }

    Optional<Boolean> bool(String key) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        String v = raw.get().toLowerCase(Locale.ROOT);
        if (v.equals("true") || v.equals("false")) {
            return Optional.of(Boolean.valueOf(v));
        }
        refuse(key, raw.get(), "expected true or false");
        return Optional.empty();
    }

    <N extends Number> Optional<N> number(String key, Function<String, N> parse) {
        Optional<String> raw = string(key);
        try {
            return raw.map(parse);
        } catch (NumberFormatException e) {
            refuse(key, raw.get(), "expected a whole number");
            return Optional.empty();
        }
    }

    Optional<Double> decimal(String key) {
        Optional<String> raw = string(key);
        try {
            return raw.map(Double::valueOf);
        } catch (NumberFormatException e) {
            refuse(key, raw.get(), "expected a number such as 0.9");
            return Optional.empty();
        }
    }

    Optional<Duration> duration(String key) {
        Optional<String> raw = string(key);
        try {
            return raw.map(Duration::parse);
        } catch (DateTimeParseException e) {
            refuse(key, raw.get(), "expected an ISO-8601 duration such as PT0.5S, PT5S or PT2M");
            return Optional.empty();
        }
    }

    /** {@code type} is an enum; its constants are matched ignoring case, {@code -} standing for {@code _}. */
    <E> Optional<E> enumValue(String key, Class<E> type) {
        Optional<String> raw = string(key);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        String wanted = raw.get().replace('-', '_');
        List<String> allowed = new ArrayList<>();
        for (E constant : type.getEnumConstants()) {
            String name = ((Enum<?>) constant).name();
            if (name.equalsIgnoreCase(wanted)) {
                return Optional.of(constant);
            }
            allowed.add(name);
        }
        refuse(key, raw.get(), "expected one of " + allowed + " (case-insensitive)");
        return Optional.empty();
    }

    /** Records a StoreOptions setter, trying it once now so a refused value is reported with its key. */
    void option(FerretSettings.Key key, Object value, Consumer<StoreOptions> setter) {
        try {
            setter.accept(probe);
            options.add(setter);
        } catch (ConfigurationException | IllegalArgumentException e) {
            refuse(key.name(), String.valueOf(value), e.getMessage());
        }
    }

    /** Reads and checks one daemon setting under its key, as its declaration says. */
    <T> void daemon(Setting<T> setting) {
        String key = FerretSettings.PREFIX + setting.key();
        Optional<T> value = typed(key, setting.type());
        if (value.isEmpty()) {
            return;
        }
        String refusal = setting.refusal(value.get());
        if (refusal != null) {
            refuse(key, string(key).orElse(""), refusal);
        } else {
            options.add(o -> o.daemon().set(setting, value.get()));
        }
    }

    private <T> Optional<T> typed(String key, Class<T> type) {
        Optional<?> value;
        if (type == Duration.class) {
            value = duration(key);
        } else if (type == Integer.class) {
            value = number(key, Integer::valueOf);
        } else if (type == Long.class) {
            value = number(key, Long::valueOf);
        } else if (type == Double.class) {
            value = decimal(key);
        } else if (type == Boolean.class) {
            value = bool(key);
        } else if (type.isEnum()) {
            value = enumValue(key, type);
        } else {
            throw new IllegalStateException("no parser for " + type + " of " + key);
        }
        return value.map(type::cast);
    }

    /** Reads each named database's keys and checks the mapping on the probe, so problems name their keys. */
    void tenancyDatabases(String list) {
        javax.sql.DataSource unused = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                FerretSettings.class.getClassLoader(), new Class<?>[] {javax.sql.DataSource.class},
                (proxy, method, args) -> {
                    throw new UnsupportedOperationException("configuration probe");
                });
        for (String entry : list.split(",")) {
            String name = entry.trim();
            if (name.isEmpty()) {
                continue;
            }
            String dataSourceKey = FerretSettings.tenancyKey(name, "datasource");
            String tenantsKey = FerretSettings.tenancyKey(name, "tenants");
            Optional<String> jndi = string(dataSourceKey);
            List<String> tenants = string(tenantsKey).stream().flatMap(t -> Arrays.stream(t.split(",")))
                    .map(String::trim).filter(t -> !t.isEmpty()).toList();
            if (jndi.isEmpty()) {
                refuse(FerretSettings.TENANCY_DATABASES.name(), list, "database '" + name + "' needs " + dataSourceKey
                        + " (the JNDI name of its data source)");
                continue;
            }
            String replicaKey = FerretSettings.tenancyKey(name, "replica-datasource");
            String replica = string(replicaKey).orElse(null);
            if (jndi.get().equals(replica)) {
                refuse(replicaKey, replica, "it names the primary's own data source (" + dataSourceKey + "); name a"
                        + " standby's, or none");
                continue;
            }
            try {
                probe.tenancy().database(name, unused, tenants.toArray(String[]::new));
                tenancyDatabases.add(new FerretSettings.TenancyDatabase(name, jndi.get(), tenants, replica));
            } catch (ConfigurationException e) {
                refuse(tenants.isEmpty() ? tenantsKey : FerretSettings.TENANCY_DATABASES.name(), tenants.isEmpty() ? "" : list,
                        e.getMessage());
            }
        }
    }

    void eventTypes(String list) {
        for (String entry : list.split(",")) {
            String item = entry.trim();
            if (item.isEmpty()) {
                continue;
            }
            int eq = item.indexOf('=');
            String className = eq < 0 ? item : item.substring(eq + 1).trim();
            String alias = eq < 0 ? className.substring(className.lastIndexOf('.') + 1) : item.substring(0, eq).trim();
            if (alias.isEmpty() || className.isEmpty()) {
                refuse(FerretSettings.EVENT_TYPES.name(), list, "entry '" + item + "' must be a class name or alias=class name");
            } else {
                eventTypes.put(alias, className);
            }
        }
    }
}
