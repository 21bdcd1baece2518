package dev.ferret.cdi.console;

import dev.ferret.cdi.FerretExtension;
import dev.ferret.cdi.FerretSettings;
import jakarta.servlet.HttpConstraintElement;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.ServletSecurityElement;
import jakarta.servlet.annotation.ServletSecurity;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Registers the operator's console in the application when {@link FerretSettings#CONSOLE_ENABLED} is true: the
 * container finds this initializer in the extension's jar, so the application holds no code for it. The console's
 * path is open only to callers in the operator or the viewer role, enforced by the container's own security
 * constraint; which users hold the roles, and how they log in, is the server's and the application's configuration
 * (see the extension's README). A refused key fails the deployment, naming key and value.
 */
public final class ConsoleInitializer implements ServletContainerInitializer {

    private static final Logger LOG = Logger.getLogger(ConsoleInitializer.class.getName());

    @Override
    public void onStartup(Set<Class<?>> classes, ServletContext context) throws ServletException {
        ConsoleSettings.Read read = ConsoleSettings.read(FerretExtension::configValue);
        if (!read.problems().isEmpty()) {
            throw new ServletException(String.join("; ", read.problems()));
        }
        ConsoleSettings settings = read.settings();
        if (!settings.enabled()) {
            return;
        }
        ConsoleServlet servlet = new ConsoleServlet(settings);
        ServletRegistration.Dynamic console = context.addServlet("ferret-console", servlet);
        if (console == null) {
            throw new ServletException("the application already has a servlet named ferret-console");
        }
        Set<String> taken = console.addMapping(settings.path() + "/*");
        if (!taken.isEmpty()) {
            throw new ServletException("Ferret configuration: " + FerretSettings.CONSOLE_PATH.name() + "='"
                    + settings.path() + "' is taken by another servlet of the application (" + taken + ")");
        }
        context.declareRoles(settings.operatorRole(), settings.viewerRole());
        Set<String> constrainedElsewhere = console.setServletSecurity(new ServletSecurityElement(
                new HttpConstraintElement(settings.confidential() ? ServletSecurity.TransportGuarantee.CONFIDENTIAL
                        : ServletSecurity.TransportGuarantee.NONE, settings.operatorRole(), settings.viewerRole())));
        if (!constrainedElsewhere.isEmpty()) {
            // the deployment descriptor's constraint wins over this one: it could open what the console protects
            String why = "Ferret console: the application's web.xml declares a security constraint for "
                    + constrainedElsewhere + ", which would replace the console's own (roles " + settings.operatorRole()
                    + ", " + settings.viewerRole() + "); remove it, or move " + FerretSettings.CONSOLE_PATH.name()
                    + " elsewhere";
            // closed even where the server keeps the application running after this initializer failed
            servlet.refuseAll(why);
            throw new ServletException(why);
        }
        LOG.info("Ferret console at " + context.getContextPath() + settings.path() + "/ for the roles "
                + settings.operatorRole() + " (actions) and " + settings.viewerRole() + " (view)");
    }
}
