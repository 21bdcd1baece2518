package dev.ferret.daemon;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One daemon setting, declared once in {@link DaemonSettings}. Everything about it comes from this declaration: the
 * setter's validation and its message, the container's MicroProfile Config key ({@code ferret.} + {@link #key()}),
 * and its rows in the settings tables of the daemon guide and the extension's README (a test compares them).
 *
 * @param <T> the value's type: {@link Duration}, {@link Integer}, {@link Long}, {@link Double}, {@link Boolean} or
 *            {@link DaemonMode}
 */
public final class Setting<T> {

    private final int index;
    private final String property;
    private final String key;
    private final Class<T> type;
    private final T defaultValue;
    private final String values;
    private final Predicate<T> accepts;
    private final String description;

    Setting(int index, String property, String key, Class<T> type, T defaultValue, String values,
            Predicate<T> accepts, String description) {
        this.index = index;
        this.property = property;
        this.key = key;
        this.type = type;
        this.defaultValue = defaultValue;
        this.values = values;
        this.accepts = accepts;
        this.description = description;
    }

    int index() {
        return index;
    }

    /** The name of its setter and getter on {@link DaemonSettings}, e.g. {@code pollingInterval}. */
    public String property() {
        return property;
    }

    /** Its configuration key without the container's {@code ferret.} prefix, e.g. {@code daemon.polling-interval}. */
    public String key() {
        return key;
    }

    /** The type of its values. */
    public Class<T> type() {
        return type;
    }

    /** Its value when nobody sets it. */
    public T defaultValue() {
        return defaultValue;
    }

    /** The values it takes, in words that complete "must be ...", e.g. {@code 1-100000}. */
    public String values() {
        return values;
    }

    /** What it does, for the documentation (Markdown). */
    public String description() {
        return description;
    }

    /** Why {@code value} is refused ("must be ..."), or null when it is taken. */
    public String refusal(T value) {
        return value != null && accepts.test(value) ? null : "must be " + values;
    }

    @Override
    public String toString() {
        return property + " (" + key + ")";
    }

    /** The declarations' value rules, each with the words its messages and documentation use. */
    record Rule<T>(String values, Predicate<T> accepts) {

        static Rule<Duration> positive() {
            return new Rule<>("a positive duration", d -> !d.isNegative() && !d.isZero());
        }

        static Rule<Duration> anyDuration(String whenNotPositive) {
            return new Rule<>("a duration (zero or negative: " + whenNotPositive + ")", d -> true);
        }

        static Rule<Integer> between(int min, int max) {
            return new Rule<>(min + "-" + max, n -> n >= min && n <= max);
        }

        static <T> Rule<T> any(String values) {
            return new Rule<>(values, v -> true);
        }

        Rule {
            Objects.requireNonNull(values);
        }
    }
}
