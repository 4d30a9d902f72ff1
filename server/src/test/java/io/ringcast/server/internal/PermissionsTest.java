package io.ringcast.server.internal;

import io.ringcast.protocol.PathLimits;
import io.ringcast.server.config.ConfigLoader;
import io.ringcast.server.config.ServerConfig;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.ringcast.server.internal.SelectorIndexTest.selector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Permissions}: the union of a session's roles, matched with wildcards, for reading, publishing and subscribing. */
class PermissionsTest {
    static final String ROLES = """
            security:
              anonymousRoles: ["viewer"]
              roles:
                - name: viewer
                  subscribe: ["public/#"]
                  publish: []
                - name: fx-trader
                  subscribe: ["fx/+/bid", "fx/+/ask"]
                  publish: ["fx/orders/+"]
                - name: auditor
                  subscribe: ["#"]
                  publish: []
            """;
    private static final ServerConfig.Security SECURITY = ConfigLoader.fromYaml(ROLES).security();

    private static Permissions of(String... roles) {
        return Permissions.of(SECURITY, List.of(roles), "principal 'alice'", PathLimits.DEFAULT);
    }

    private static String[] path(String path) {
        return path.split("/");
    }

    @Test
    void oneRoleGrantsWhatItsSelectorsMatch() {
        Permissions trader = of("fx-trader");

        assertThat(trader.mayRead(path("fx/EURUSD/bid"))).isTrue();
        assertThat(trader.mayRead(path("fx/EURUSD/mid"))).isFalse();
        assertThat(trader.mayRead(path("fx/EURUSD"))).isFalse();
        assertThat(trader.mayPublish(path("fx/orders/42"))).isTrue();
        assertThat(trader.mayPublish(path("fx/EURUSD/bid"))).as("reading is not publishing").isFalse();
        assertThat(trader.mayPublish(path("fx/orders/42/x"))).isFalse();
    }

    @Test
    void severalRolesGrantTheUnion() {
        Permissions both = of("viewer", "fx-trader");

        assertThat(both.mayRead(path("public/news"))).isTrue();
        assertThat(both.mayRead(path("public"))).as("# also matches its parent").isTrue();
        assertThat(both.mayRead(path("fx/GBPUSD/ask"))).isTrue();
        assertThat(both.mayRead(path("private/x"))).isFalse();
        assertThat(both.mayPublish(path("public/news"))).isFalse();
    }

    @Test
    void noRolesGrantNothing() {
        Permissions none = of();

        assertThat(none.mayRead(path("public/news"))).isFalse();
        assertThat(none.mayPublish(path("fx/orders/1"))).isFalse();
        assertThat(none.mayEverRead(selector("#"))).isFalse();
    }

    @Test
    void whoIsTheNameGivenForRefusals() {
        assertThat(of("viewer").who()).isEqualTo("principal 'alice'");
        assertThat(Permissions.ALL.who()).isEqualTo("everyone");
    }

    @Test
    void unknownRoleIsRefusedByName() {
        assertThatThrownBy(() -> of("viewer", "admin")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown role 'admin'");
    }

    @Test
    void subscriptionMayEverReadWhenSomePathMatchesBothItAndAGrant() {
        Permissions trader = of("fx-trader");

        assertThat(trader.mayEverRead(selector("fx/EURUSD/bid"))).isTrue();
        assertThat(trader.mayEverRead(selector("fx/#"))).as("wider than the grant, overlapping it").isTrue();
        assertThat(trader.mayEverRead(selector("#"))).isTrue();
        assertThat(trader.mayEverRead(selector("+/+/ask"))).isTrue();
        assertThat(trader.mayEverRead(selector("fx/EURUSD/mid"))).isFalse();
        assertThat(trader.mayEverRead(selector("fx/+"))).as("too short for fx/+/bid").isFalse();
        assertThat(trader.mayEverRead(selector("fx/+/bid/x"))).as("too long").isFalse();
        assertThat(trader.mayEverRead(selector("eq/#"))).isFalse();
    }

    @Test
    void subtreeGrantOverlapsItsParentPath() {
        Permissions viewer = of("viewer");

        assertThat(viewer.mayEverRead(selector("public"))).isTrue();
        assertThat(viewer.mayEverRead(selector("+"))).isTrue();
        assertThat(viewer.mayEverRead(selector("publicity"))).isFalse();
    }

    @Test
    void everythingGrantsEverything() {
        assertThat(of("auditor").mayRead(path("any/path/at/all"))).isTrue();
        assertThat(Permissions.ALL.mayRead(path("x"))).isTrue();
        assertThat(Permissions.ALL.mayPublish(path("x/y/z"))).isTrue();
    }
}
