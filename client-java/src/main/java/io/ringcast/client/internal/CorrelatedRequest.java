package io.ringcast.client.internal;

/**
 * A request the server answers by correlation id, a publish or a removal: the two share the id
 * space {@code [2^30, 2^31)} and one queue, so that they go out in the order they were made
 * ({@link PublishWindow}).
 */
sealed interface CorrelatedRequest extends ClientCommand permits PublishRequest, RemoveRequest {
}
