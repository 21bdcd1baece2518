package dev.ferret.cdi;

import dev.ferret.projections.Lifecycle;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.inject.Stereotype;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a CDI bean as a projection the store registers at startup: either a class extending
 * {@link dev.ferret.projections.EventProjection}, or a producer method returning any
 * {@link dev.ferret.projections.Projection} (a {@code Snapshot}, a {@code MultiStreamProjection}, ...).
 *
 * <pre>{@code
 * @ApplicationScoped
 * public class Projections {
 *     @Produces @AsyncProjection
 *     Snapshot<OrderSummary> orderSummary() {
 *         return Snapshot.of(OrderSummary.class).create(OrderPlaced.class, ...).apply(...);
 *     }
 * }
 *
 * @AsyncProjection
 * public class ShippingLog extends EventProjection { ... }
 * }</pre>
 *
 * <p>It is a stereotype that makes the bean {@code @Dependent} and is a bean defining annotation, so the bean is
 * discovered in an {@code annotated} bean archive. The scope must stay {@code @Dependent}: a projection's methods are
 * final and cannot go through a client proxy. Every projection is instantiated once, when the application starts.
 *
 * <p>This annotation lives in {@code ferret-cdi}, not in {@code ferret-api}, to keep the API free of
 * CDI types: Java SE users never need it.
 */
@Stereotype
@Dependent
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface AsyncProjection {

    /**
     * The projection's name, when given: it must equal the projection's own {@link
     * dev.ferret.projections.Projection#name()}, which names its shard ({@code <name>:All}). Empty: take the
     * projection's.
     */
    String name() default "";

    /** The projection's version, when given (1 or more): it must equal the projection's own. 0: take the projection's. */
    int version() default 0;

    /** Async (daemon, the default) or inline (inside the appending transaction). */
    Lifecycle lifecycle() default Lifecycle.ASYNC;

    /**
     * Event types the projection handles, registered when the store starts so that events of a type only this
     * projection knows read back after a restart. Snapshot and multi-stream projections declare theirs already; an
     * {@code EventProjection} may also call {@code handles(...)} in its constructor.
     */
    Class<?>[] events() default {};
}
