package dev.ferret.cdi;

import dev.ferret.ConfigurationException;
import dev.ferret.cdi.health.FerretLivenessCheck;
import dev.ferret.cdi.health.FerretReadinessCheck;
import dev.ferret.projections.Lifecycle;
import dev.ferret.projections.Projection;
import dev.ferret.subscriptions.SubscriptionBase;
import jakarta.enterprise.context.Dependent;
import jakarta.enterprise.context.spi.CreationalContext;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.inject.spi.DeploymentException;
import jakarta.enterprise.inject.spi.BeforeBeanDiscovery;
import jakarta.enterprise.inject.spi.BeforeShutdown;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.ProcessBean;
import jakarta.enterprise.inject.spi.ProcessManagedBean;
import jakarta.enterprise.inject.spi.ProcessProducerMethod;
import jakarta.enterprise.inject.spi.WithAnnotations;
import jakarta.inject.Singleton;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Logger;

/**
 * The portable extension: collects the {@link AsyncProjection} beans, checks them and the configuration at
 * deployment (each problem fails the deployment with a message naming the bean or the key, and why), and hands
 * the result to {@link FerretStoreLifecycle}, which builds the store. It does nothing else: all behaviour is in the
 * plain-Java runtime.
 */
public class FerretExtension implements Extension {

    private static final Logger LOG = Logger.getLogger(FerretExtension.class.getName());
    private static final String HEALTH_API = "org.eclipse.microprofile.health.HealthCheck";
    private static final String FAULT_TOLERANCE_API = "org.eclipse.microprofile.faulttolerance.Retry";

    /** A projection bean as found, and later its instance. */
    record Found(Bean<?> bean, String description, AsyncProjection annotation) {
    }

    /** A checked projection instance with its lifecycle. */
    public record Registered(Projection projection, Lifecycle lifecycle, String description,
                             List<Class<?>> eventTypes) {
        public Registered {
            eventTypes = List.copyOf(eventTypes);
        }
    }

    private final Set<String> annotatedTypes = new LinkedHashSet<>();
    private final Set<String> typesWithBeans = new LinkedHashSet<>();
    private final List<Found> found = new ArrayList<>();
    private final List<Registered> registered = new ArrayList<>();
    private final List<SubscriptionBase> subscriptions = new ArrayList<>();
    private final List<CreationalContext<?>> contexts = new ArrayList<>();
    private volatile FerretSettings settings;

    void addBeans(@Observes BeforeBeanDiscovery bbd, BeanManager bm) {
        bbd.addAnnotatedType(bm.createAnnotatedType(FerretStoreLifecycle.class), FerretStoreLifecycle.class.getName());
        bbd.addAnnotatedType(bm.createAnnotatedType(JtaTransactions.class), JtaTransactions.class.getName());
        bbd.addAnnotatedType(bm.createAnnotatedType(NewJtaTransaction.class), NewJtaTransaction.class.getName());
        if (present(HEALTH_API)) {
            bbd.addAnnotatedType(bm.createAnnotatedType(FerretReadinessCheck.class),
                    FerretReadinessCheck.class.getName());
            bbd.addAnnotatedType(bm.createAnnotatedType(FerretLivenessCheck.class),
                    FerretLivenessCheck.class.getName());
        } else {
            LOG.info("MicroProfile Health is not available; Ferret registers no health checks");
        }
        if (present(FAULT_TOLERANCE_API)) {
            bbd.addAnnotatedType(bm.createAnnotatedType(FaultToleranceRetries.class),
                    FaultToleranceRetries.class.getName());
        } else {
            LOG.info("MicroProfile Fault Tolerance is not available; Ferret retries transient failures itself");
        }
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, FerretExtension.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Remembers every type carrying the annotation, on the class or a method, to report those that made no bean. */
    <T> void collect(@Observes @WithAnnotations(AsyncProjection.class) ProcessAnnotatedType<T> pat) {
        AnnotatedType<T> type = pat.getAnnotatedType();
        if (type.isAnnotationPresent(AsyncProjection.class)) {
            annotatedTypes.add(type.getJavaClass().getName());
        }
    }

    <T> void managedBean(@Observes ProcessManagedBean<T> pb) {
        AsyncProjection annotation = pb.getAnnotated().getAnnotation(AsyncProjection.class);
        if (annotation == null) {
            return;
        }
        Class<?> beanClass = pb.getAnnotatedBeanClass().getJavaClass();
        typesWithBeans.add(beanClass.getName());
        String description = "@AsyncProjection bean " + beanClass.getName();
        if (!Projection.class.isAssignableFrom(beanClass) && !SubscriptionBase.class.isAssignableFrom(beanClass)) {
            pb.addDefinitionError(new ConfigurationException(description + " is not a projection: annotate a class"
                    + " extending dev.ferret.projections.EventProjection or dev.ferret.subscriptions.SubscriptionBase,"
                    + " or a producer method returning a Snapshot, MultiStreamProjection or other"
                    + " dev.ferret.projections.Projection"));
            return;
        }
        accept(pb, description, annotation);
    }

    <T, X> void producerMethod(@Observes ProcessProducerMethod<T, X> pb) {
        AsyncProjection annotation = pb.getAnnotated().getAnnotation(AsyncProjection.class);
        if (annotation == null) {
            return;
        }
        var method = pb.getAnnotatedProducerMethod().getJavaMember();
        String description = "@AsyncProjection producer method " + method.getDeclaringClass().getName() + "."
                + method.getName() + "()";
        Class<?> returned = raw(method.getGenericReturnType());
        if (!Projection.class.isAssignableFrom(returned) && !SubscriptionBase.class.isAssignableFrom(returned)) {
            pb.addDefinitionError(new ConfigurationException(description + " is not a projection: it returns "
                    + method.getGenericReturnType().getTypeName() + "; return a Snapshot, MultiStreamProjection,"
                    + " EventProjection or other dev.ferret.projections.Projection"));
            return;
        }
        accept(pb, description, annotation);
    }

    private void accept(ProcessBean<?> pb, String description, AsyncProjection annotation) {
        Class<?> scope = pb.getBean().getScope();
        if (scope != Dependent.class && scope != Singleton.class) {
            pb.addDefinitionError(new ConfigurationException(description + " has scope @" + scope.getSimpleName()
                    + "; a projection must be @Dependent (the default of @AsyncProjection), because its methods are"
                    + " final and cannot go through a client proxy"));
            return;
        }
        if (annotation.version() < 0) {
            pb.addDefinitionError(new ConfigurationException(description + " declares version "
                    + annotation.version() + "; a version is 1 or more (0: take the projection's own)"));
            return;
        }
        found.add(new Found(pb.getBean(), description, annotation));
    }

    private static Class<?> raw(Type type) {
        if (type instanceof Class<?> c) {
            return c;
        }
        if (type instanceof ParameterizedType p) {
            return raw(p.getRawType());
        }
        return Object.class;
    }

    void unresolved(@Observes AfterBeanDiscovery abd) {
        for (String type : annotatedTypes) {
            if (!typesWithBeans.contains(type)) {
                abd.addDefinitionError(new ConfigurationException("@AsyncProjection type " + type
                        + " is not a bean (abstract, an interface, vetoed or without a usable constructor), so it"
                        + " cannot be registered; annotate a concrete class"));
            }
        }
        // names the annotations declare collide before anything is instantiated
        Map<String, Found> byName = new LinkedHashMap<>();
        for (Found f : found) {
            if (f.annotation().name().isEmpty()) {
                continue;
            }
            String key = f.annotation().name() + "@" + Math.max(1, f.annotation().version());
            Found previous = byName.putIfAbsent(key, f);
            if (previous != null) {
                abd.addDefinitionError(duplicate(f.annotation().name(), Math.max(1, f.annotation().version()),
                        previous.description(), f.description()));
            }
        }
    }

    private static ConfigurationException duplicate(String name, int version, String first, String second) {
        return new ConfigurationException("duplicate projection name '" + name + "' (version " + version + "): "
                + first + " and " + second + " both use it; every projection needs its own name (it names its"
                + " shard and progression)");
    }

    /** Reads the configuration and instantiates every projection once, reporting every problem. */
    void validate(@Observes AfterDeploymentValidation adv, BeanManager bm) {
        FerretSettings read = FerretSettings.read(FerretExtension::configValue);
        read.problems().forEach(p -> adv.addDeploymentProblem(new ConfigurationException(p)));
        List<String> unknown = read.unknownKeys(configNames());
        if (!unknown.isEmpty()) {
            LOG.warning("Ferret configuration: no Ferret setting reads " + String.join(", ", unknown)
                    + "; they are ignored (every key is listed in the README of ferret-cdi)");
        }
        this.settings = read;
        FerretSettings.keysWithoutEffect(configNames()).forEach(LOG::warning);

        Map<String, Registered> byName = new LinkedHashMap<>();
        for (Found f : found) {
            Projection projection;
            try {
                CreationalContext<?> context = bm.createCreationalContext(f.bean());
                contexts.add(context);
                Object instance = bm.getReference(f.bean(), Object.class, context);
                if (instance instanceof SubscriptionBase subscription) {
                    acceptSubscription(adv, f, subscription);
                    continue;
                }
                projection = (Projection) instance;
            } catch (RuntimeException e) {
                adv.addDeploymentProblem(new DeploymentException(f.description() + " could not be created: " + e, e));
                continue;
            }
            if (projection == null) {
                adv.addDeploymentProblem(new ConfigurationException(f.description() + " produced null"));
                continue;
            }
            AsyncProjection a = f.annotation();
            if (!a.name().isEmpty() && !a.name().equals(projection.name())) {
                adv.addDeploymentProblem(new ConfigurationException(f.description() + " declares name '" + a.name()
                        + "' but its projection is named '" + projection.name() + "'; drop one or make them equal"));
                continue;
            }
            if (a.version() > 0 && a.version() != projection.version()) {
                adv.addDeploymentProblem(new ConfigurationException(f.description() + " declares version "
                        + a.version() + " but its projection " + projection.name() + " is version "
                        + projection.version() + "; drop one or make them equal"));
                continue;
            }
            String key = projection.name() + "@" + projection.version();
            Registered r = new Registered(projection, a.lifecycle(), f.description(), List.of(a.events()));
            Registered previous = byName.putIfAbsent(key, r);
            if (previous != null) {
                adv.addDeploymentProblem(duplicate(projection.name(), projection.version(), previous.description(),
                        f.description()));
                continue;
            }
            registered.add(r);
        }
        // projections and subscriptions share one namespace of shard names: a clash is a deployment problem, before
        // any store starts
        for (SubscriptionBase subscription : subscriptions) {
            registered.stream().filter(r -> r.projection().name().equals(subscription.name())).findFirst()
                    .ifPresent(r -> adv.addDeploymentProblem(new ConfigurationException("subscription "
                            + subscription.getClass().getName() + " and projection bean " + r.description()
                            + " are both named '" + subscription.name() + "' and would share its shards; rename one")));
        }
        LOG.info("Ferret found " + registered.size() + " projection beans: "
                + registered.stream().map(r -> r.projection() + " (" + r.lifecycle() + ")").toList());
    }

    private void acceptSubscription(AfterDeploymentValidation adv, Found f, SubscriptionBase subscription) {
        AsyncProjection a = f.annotation();
        if (a.lifecycle() != Lifecycle.ASYNC) {
            adv.addDeploymentProblem(new ConfigurationException(f.description() + " is a subscription with lifecycle "
                    + a.lifecycle() + "; subscriptions only run in the daemon (there are no inline subscriptions)"));
            return;
        }
        try {
            if (!a.name().isEmpty()) {
                subscription.name(a.name());
            }
        } catch (IllegalArgumentException e) {
            adv.addDeploymentProblem(new ConfigurationException(f.description() + ": " + e.getMessage()));
            return;
        }
        for (SubscriptionBase other : subscriptions) {
            if (other.name().equals(subscription.name())) {
                adv.addDeploymentProblem(new ConfigurationException("duplicate subscription name '"
                        + subscription.name() + "': " + f.description() + " and " + other.getClass().getName()
                        + " both use it; give one another name"));
                return;
            }
        }
        subscriptions.add(subscription);
    }

    /** The subscriptions found and checked at deployment. */
    public List<SubscriptionBase> subscriptions() {
        return List.copyOf(subscriptions);
    }

    void release(@Observes BeforeShutdown shutdown) {
        contexts.forEach(CreationalContext::release);
        contexts.clear();
    }

    /** The projections found and checked at deployment. */
    public List<Registered> projections() {
        return List.copyOf(registered);
    }

    /** The configuration as read at deployment. */
    public FerretSettings settings() {
        FerretSettings s = settings;
        return s != null ? s : FerretSettings.read(FerretExtension::configValue);
    }

    /** MicroProfile Config where it is available, else system properties. */
    public static Optional<String> configValue(String key) {
        if (present("org.eclipse.microprofile.config.ConfigProvider")) {
            return MpConfig.value(key);
        }
        return Optional.ofNullable(System.getProperty(key));
    }

    /** Every configured name, from where {@link #configValue} reads. */
    static Iterable<String> configNames() {
        if (present("org.eclipse.microprofile.config.ConfigProvider")) {
            return MpConfig.names();
        }
        return System.getProperties().stringPropertyNames();
    }

    /** Kept apart so the extension loads without MicroProfile Config. */
    private static final class MpConfig {
        static Optional<String> value(String key) {
            return org.eclipse.microprofile.config.ConfigProvider.getConfig().getOptionalValue(key, String.class);
        }

        static Iterable<String> names() {
            return org.eclipse.microprofile.config.ConfigProvider.getConfig().getPropertyNames();
        }
    }
}
