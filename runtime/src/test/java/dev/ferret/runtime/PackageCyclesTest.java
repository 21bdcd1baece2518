package dev.ferret.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Keeps the packages of {@code runtime} free of cycles: the JDK's {@code jdeps} reads the compiled main classes, and
 * every strongly connected group of more than one package fails the build, naming the packages. Runs without a
 * database.
 */
class PackageCyclesTest {

    private static final String ROOT = "dev.ferret.runtime";
    /** A jdeps {@code -verbose:package} line: {@code    from    -> to    where}. */
    private static final Pattern EDGE = Pattern.compile("^\\s+(\\S+)\\s+->\\s+(\\S+)\\s");

    @Test
    void noPackageOfTheRuntimeDependsOnItselfThroughAnother() throws Exception {
        Map<String, Set<String>> graph = packageGraph(mainClasses());
        assertThat(graph).as("jdeps found the runtime's packages").containsKeys(ROOT, ROOT + ".daemon");
        assertThat(cycles(graph)).as("package cycles in runtime (break them by moving the type both sides use"
                + " into a package below both)").isEmpty();
    }

    @Test
    void theCheckFindsACycleWhenThereIsOne() {
        Map<String, Set<String>> graph = new TreeMap<>();
        graph.put("a", new TreeSet<>(Set.of("b")));
        graph.put("b", new TreeSet<>(Set.of("c")));
        graph.put("c", new TreeSet<>(Set.of("a")));
        graph.put("d", new TreeSet<>(Set.of("a")));

        assertThat(cycles(graph)).containsExactly(List.of("a", "b", "c"));
    }

    private static Path mainClasses() throws URISyntaxException {
        return Path.of(FerretDocumentStore.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** Package to the packages it uses, within the runtime. */
    private static Map<String, Set<String>> packageGraph(Path classes) {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps")
                .orElseThrow(() -> new IllegalStateException("the build needs a JDK with jdeps"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:package", "-filter:none",
                "-e", ROOT.replace(".", "\\.") + ".*", classes.toString());
        assertThat(exit).as("jdeps: %s", err).isZero();
        Map<String, Set<String>> graph = new TreeMap<>();
        for (String line : out.toString().split("\\R")) {
            Matcher edge = EDGE.matcher(line);
            if (edge.find() && edge.group(1).startsWith(ROOT) && edge.group(2).startsWith(ROOT)
                    && !edge.group(1).equals(edge.group(2))) {
                graph.computeIfAbsent(edge.group(1), p -> new TreeSet<>()).add(edge.group(2));
            }
        }
        return graph;
    }

    /** Every strongly connected component of more than one package (Tarjan), each sorted. */
    static List<List<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<List<String>> found = new ArrayList<>();
        for (String node : graph.keySet()) {
            if (!index.containsKey(node)) {
                connect(node, graph, index, low, stack, onStack, found);
            }
        }
        return found;
    }

    private static void connect(String node, Map<String, Set<String>> graph, Map<String, Integer> index,
                                Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
                                List<List<String>> found) {
        index.put(node, index.size());
        low.put(node, index.get(node));
        stack.push(node);
        onStack.add(node);
        for (String next : graph.getOrDefault(node, Set.of())) {
            if (!index.containsKey(next)) {
                connect(next, graph, index, low, stack, onStack, found);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (onStack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            Set<String> component = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                found.add(List.copyOf(component));
            }
        }
    }
}
