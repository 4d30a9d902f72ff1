package io.ringcast.server.config;

public enum WaitStrategyKind { BLOCKING, SLEEPING, YIELDING, BUSY_SPIN }
