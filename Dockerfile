# Ringcast server image: docs/operations.md, "Deploying".
#
#   docker build -t ringcast .
#   docker run --rm -p 8080:8080 ringcast
#   docker run --rm -p 9000:9000 -e RINGCAST_SERVER_PORT=9000 -e RINGCAST_FEATURES_DELTAS=true ringcast
#   docker run --rm -p 8080:8080 -v "$PWD/my-config:/var/lib/ringcast/config:ro" ringcast   # my-config/server.yaml
#
# Config: RINGCAST_* environment variables (docs/configuration.md), over config/server.yaml in the
# working directory when one is mounted there (a directory mount, so that an edit reaches the
# node's hot reload), else over the embedded defaults. More JVM flags: JDK_JAVA_OPTIONS (put before
# the ENTRYPOINT's own; an -Xmx there replaces the heap percentage).
# ContainerEntrypointTest runs the ENTRYPOINT and the HEALTHCHECK below against the built jar.

FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -ntp -DskipTests -pl server -am package

FROM eclipse-temurin:17-jre
# A system user of its own, with a fixed id so that a mounted directory can be given to it.
RUN groupadd --system --gid 10001 ringcast \
    && useradd --system --uid 10001 --gid ringcast --home-dir /var/lib/ringcast --shell /usr/sbin/nologin ringcast \
    && mkdir -p /var/lib/ringcast/config /var/lib/ringcast/data \
    && chown -R ringcast:ringcast /var/lib/ringcast
COPY --from=build /src/server/target/ringcast-server.jar /opt/ringcast/ringcast-server.jar
USER ringcast
# The node's own directory: config/server.yaml when mounted, data/ for cluster.dataDir (data/<nodeName>
# by default) and a relative state.file.
WORKDIR /var/lib/ringcast
# Clients (WebSocket, /health, /metrics); cluster membership (cluster.members[].membershipPort, 7800
# in compose.yaml) and its socket failure detection on membershipPort + 1000.
EXPOSE 8080 7800 8800
# The JRE image has no curl: bash asks /health on the port of RINGCAST_SERVER_PORT (8080 when unset)
# over /dev/tcp. Plain HTTP only: with TLS on, give the container a health check of your own.
# A cluster node opens its client port only once a majority is up: start-period covers that.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${RINGCAST_SERVER_PORT:-8080} && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && read -r -t 4 status <&3 && [[ $status == *' 200 '* ]]"]
# -XX:+ExitOnOutOfMemoryError: an OutOfMemoryError ends the process, for the container's restart
# policy. Heap at most 40% of the container's memory: Netty's pooled direct buffers may take as much
# again (the JVM's direct memory limit defaults to the heap's), and metaspace and thread stacks the rest.
# What threads freed is given back to the system every 5 s (-XX:TrimNativeHeapInterval, JDK 17.0.9+):
# the C library's malloc would keep it (docs/operations.md#memory).
ENTRYPOINT ["java", "-XX:+ExitOnOutOfMemoryError", "-XX:MaxRAMPercentage=40", "-XX:TrimNativeHeapInterval=5000", "-jar", "/opt/ringcast/ringcast-server.jar"]
# Arguments for the jar, e.g. --config /etc/ringcast/server.yaml (it must exist).
CMD []
