package org.scholarindex.engine;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.logging.log4j.LogManager;
import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.join.ParentJoinPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * One OpenSearch node in this JVM, its modules loaded from the classpath.
 *
 * <p>Arguments are node settings, {@code key=value}; a value written {@code [a,b]} is a
 * list. The node runs until the JVM is told to stop (SIGTERM, SIGINT), then closes
 * cleanly: the shutdown hook flushes and releases the data path's lock.
 *
 * <p>With the system property {@code engine.parent.pid} set, the node also stops once
 * that process is gone, so a test run killed mid-way leaves no node behind.
 */
public final class NodeMain {

    /** What a distribution ships as modules and the product uses (HTTP, analysis,
     * search_as_you_type, _reindex, update scripts, join fields). */
    private static final Collection<Class<? extends Plugin>> MODULES = List.of(
        Netty4Plugin.class,
        CommonAnalysisPlugin.class,
        MapperExtrasPlugin.class,
        ReindexPlugin.class,
        PainlessPlugin.class,
        ParentJoinPlugin.class);

    /** The constructor that takes classpath plugins is protected. */
    private static final class ClasspathNode extends Node {
        ClasspathNode(Environment environment) {
            super(environment, MODULES, true);
        }
    }

    private NodeMain() {}

    public static void main(String[] args) throws Exception {
        Settings settings = parse(args);
        // The configuration folder holds log4j2.properties only; settings come as arguments.
        Path config = Paths.get(System.getProperty("engine.config"));
        Environment environment = InternalSettingsPreparer.prepareEnvironment(
            settings, Map.of(), config, () -> settings.get("node.name"));
        LogConfigurator.configure(environment);
        Node node = new ClasspathNode(environment);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                // log4j's own shutdown hook is off (-Dlog4j2.shutdownHookEnabled=false), so
                // the node's last lines are written before logging stops.
                LogManager.shutdown();
                closed.countDown();
            }
        }, "node-shutdown"));
        node.start();
        watchParent(Long.getLong("engine.parent.pid", -1L));
        // The node's own threads may all be daemons: hold the JVM open until the hook ran.
        closed.await();
    }

    private static void watchParent(long pid) {
        if (pid <= 0) {
            return;
        }
        Thread watcher = new Thread(() -> {
            ProcessHandle.of(pid).ifPresent(parent -> parent.onExit().join());
            System.exit(0); // runs the shutdown hook
        }, "parent-watch");
        watcher.setDaemon(true);
        watcher.start();
    }

    static Settings parse(String[] args) {
        Settings.Builder builder = Settings.builder();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got: " + arg);
            }
            String key = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            if (value.startsWith("[") && value.endsWith("]")) {
                builder.putList(key, Arrays.asList(value.substring(1, value.length() - 1).split(",")));
            } else {
                builder.put(key, value);
            }
        }
        return builder.build();
    }
}
