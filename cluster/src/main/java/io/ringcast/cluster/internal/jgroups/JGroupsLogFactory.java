package io.ringcast.cluster.internal.jgroups;

import org.jgroups.logging.CustomLogFactory;
import org.jgroups.logging.Log;
import org.jgroups.logging.LogFactory;
import org.jgroups.logging.Slf4jLogImpl;

/**
 * JGroups' logging through SLF4J, formatting a message only when its level is enabled.
 *
 * <p>Why: JGroups 5.5.7's {@code Slf4jLogImpl.trace(format, args)} (and debug, info...) runs
 * {@code String.format} before asking SLF4J whether the level is on, and jgroups-raft calls
 * {@code log.trace(...)} unguarded several times per message on its single runner thread, which
 * applies, snapshots and replicates: with logging at WARN, thread dumps of a loaded 5-member group
 * showed the runners formatting addresses nobody logs. Installed once per process, before the first
 * channel; it serves every JGroups stack of the process.
 */
final class JGroupsLogFactory implements CustomLogFactory {

    private JGroupsLogFactory() {
    }

    /** Installs this factory unless the process chose another one already. Idempotent. */
    static synchronized void install() {
        if (LogFactory.getCustomLogFactory() == null) {
            LogFactory.setCustomLogFactory(new JGroupsLogFactory());
        }
    }

    @Override
    public Log getLog(Class<?> clazz) {
        return new LevelChecked(new Slf4jLogImpl(clazz));
    }

    @Override
    public Log getLog(String category) {
        return new LevelChecked(new Slf4jLogImpl(category));
    }

    /** Delegates to JGroups' SLF4J log, skipping the formatting of messages at disabled levels. */
    private record LevelChecked(Slf4jLogImpl log) implements Log {
        @Override public boolean isFatalEnabled() { return log.isFatalEnabled(); }
        @Override public boolean isErrorEnabled() { return log.isErrorEnabled(); }
        @Override public boolean isWarnEnabled() { return log.isWarnEnabled(); }
        @Override public boolean isInfoEnabled() { return log.isInfoEnabled(); }
        @Override public boolean isDebugEnabled() { return log.isDebugEnabled(); }
        @Override public boolean isTraceEnabled() { return log.isTraceEnabled(); }

        @Override public void fatal(String msg) { log.fatal(msg); }
        @Override public void fatal(String format, Object... args) { if (log.isFatalEnabled()) { log.fatal(format, args); } }
        @Override public void fatal(String msg, Throwable t) { log.fatal(msg, t); }
        @Override public void error(String msg) { log.error(msg); }
        @Override public void error(String format, Object... args) { if (log.isErrorEnabled()) { log.error(format, args); } }
        @Override public void error(String msg, Throwable t) { log.error(msg, t); }
        @Override public void warn(String msg) { log.warn(msg); }
        @Override public void warn(String format, Object... args) { if (log.isWarnEnabled()) { log.warn(format, args); } }
        @Override public void warn(String msg, Throwable t) { log.warn(msg, t); }
        @Override public void info(String msg) { log.info(msg); }
        @Override public void info(String format, Object... args) { if (log.isInfoEnabled()) { log.info(format, args); } }
        @Override public void debug(String msg) { log.debug(msg); }
        @Override public void debug(String format, Object... args) { if (log.isDebugEnabled()) { log.debug(format, args); } }
        @Override public void debug(String msg, Throwable t) { log.debug(msg, t); }
        @Override public void trace(Object msg) { if (log.isTraceEnabled()) { log.trace(msg); } }
        @Override public void trace(String msg) { log.trace(msg); }
        @Override public void trace(String format, Object... args) { if (log.isTraceEnabled()) { log.trace(format, args); } }
        @Override public void trace(String msg, Throwable t) { log.trace(msg, t); }
        @Override public void setLevel(String level) { log.setLevel(level); }
        @Override public String getLevel() { return log.getLevel(); }
    }
}
