package io.ringcast.client.internal;

import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.ringcast.client.RingcastException;
import io.ringcast.client.UpdateKind;
import io.ringcast.client.internal.EmbeddedConnection.Recorder;
import io.ringcast.protocol.ErrorCode;
import io.ringcast.protocol.UpdateFlags;
import io.ringcast.protocol.WireCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static io.ringcast.client.internal.PublishWindow.FIRST_CORRELATION_ID;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The inbound dispatch and the session's outbound messages, driven by frames encoded with {@link WireCodec}. */
@Timeout(10)
class ConnectionHandlerTest {
    private final EmbeddedConnection c = new EmbeddedConnection();

    @AfterEach
    void close() {
        c.close();
    }

    @Test
    void sendsHelloAloneThenSubscriptionsAndPublishesMadeBeforeWelcomeInOneFrame() {
        Recorder fx = c.subscribe("fx/#");
        CompletableFuture<Long> ack = c.publish("fx/EURUSD", "1.0843");
        assertThat(c.sent()).isEmpty(); // no session yet

        c.open();

        assertThat(c.welcomed).containsExactly(c.handler);
        var frames = c.sentFrames();
        assertThat(frames).hasSize(1);
        assertThat(Wire.decodeClientFrame(frames.get(0))).containsExactly(
                "SUBSCRIBE " + fx.id() + " fx/# {}",
                "PUBLISH " + FIRST_CORRELATION_ID + " fx/EURUSD 1.0843");
        frames.forEach(f -> f.release());

        c.fromServer(b -> WireCodec.writePublishAck(b, FIRST_CORRELATION_ID, 43));
        assertThat(ack).isCompletedWithValue(43L);
        assertThat(c.inFlight).hasValue(0);
    }

    @Test
    void routesUpdatesToEveryMatchingSubscriptionAndDropsDuplicates() {
        c.open();
        Recorder all = c.subscribe("fx/#");
        Recorder bids = c.subscribe("fx/+/bid");
        Recorder equities = c.subscribe("eq/#");
        c.sent();
        c.fromServer(b -> {
            WireCodec.writeSubscribed(b, all.id(), 0);
            WireCodec.writeSubscribed(b, bids.id(), 0);
            WireCodec.writeSubscribed(b, equities.id(), 0);
            WireCodec.writeTopic(b, 7, "fx/EURUSD/bid");
            WireCodec.writeTopic(b, 8, "fx/EURUSD/ask");
            Wire.update(b, 7, 1, "a");
            Wire.update(b, 8, 1, "b");
            Wire.update(b, 7, 1, "dup");
            Wire.update(b, 7, 2, "c");
        });
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 7, "fx/EURUSD/bid"); // a repeated TOPIC is harmless
            Wire.update(b, 7, 2, "dup again");
            Wire.update(b, 7, 1, "older");
            Wire.update(b, 7, 3, "d");
        });

        assertThat(all.updates).containsExactly("UPDATE fx/EURUSD/bid #1 a", "UPDATE fx/EURUSD/ask #1 b",
                "UPDATE fx/EURUSD/bid #2 c", "UPDATE fx/EURUSD/bid #3 d");
        assertThat(bids.updates).containsExactly("UPDATE fx/EURUSD/bid #1 a", "UPDATE fx/EURUSD/bid #2 c",
                "UPDATE fx/EURUSD/bid #3 d");
        assertThat(equities.updates).isEmpty();
        assertThat(c.session.duplicatesDropped()).isEqualTo(3);
        // one Update object per message, shared by the listeners, its value copied out of the released frame
        assertThat(all.raw.get(0)).isSameAs(bids.raw.get(0));
        assertThat(all.raw.get(0).value()).containsExactly('a');
    }

    @Test
    void snapshotGoesToTheSubscriptionItNamesAndIdZeroToEveryMatchingOne() {
        c.open();
        Recorder a = c.subscribe("fx/EURUSD");
        Recorder b = c.subscribe("fx/#");
        c.fromServer(out -> {
            WireCodec.writeTopic(out, 1, "fx/EURUSD");
            Wire.snapshot(out, a.id(), 1, 10, 0, "ten");
            WireCodec.writeSubscribed(out, a.id(), 1);
            Wire.snapshot(out, b.id(), 1, 10, 0, "ten");
            WireCodec.writeSubscribed(out, b.id(), 1);
            Wire.update(out, 1, 11, "eleven");
            // a server that lost its state: the gap snapshot resets the sequence backwards
            Wire.snapshot(out, 0, 1, 2, UpdateFlags.GAP, "two");
            Wire.update(out, 1, 3, "three");
        });

        assertThat(a.updates).containsExactly("SNAPSHOT fx/EURUSD #10 ten", "UPDATE fx/EURUSD #11 eleven",
                "SNAPSHOT_AFTER_GAP fx/EURUSD #2 two", "UPDATE fx/EURUSD #3 three");
        assertThat(b.updates).containsExactly("SNAPSHOT fx/EURUSD #10 ten", "UPDATE fx/EURUSD #11 eleven",
                "SNAPSHOT_AFTER_GAP fx/EURUSD #2 two", "UPDATE fx/EURUSD #3 three");
        assertThat(a.subscription.confirmed()).isCompleted();
        assertThat(a.raw.get(2).kind()).isEqualTo(UpdateKind.SNAPSHOT_AFTER_GAP);
    }

    @Test
    void aNewSubscriptionGetsUpdatesOnlyOnceTheServerConfirmedIt() {
        c.open();
        Recorder first = c.subscribe("fx/#");
        c.fromServer(b -> WireCodec.writeSubscribed(b, first.id(), 0));
        Recorder second = c.subscribe("fx/EURUSD");
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.update(b, 1, 5, "sent before the server saw the second SUBSCRIBE");
            Wire.snapshot(b, second.id(), 1, 5, 0, "five");
            WireCodec.writeSubscribed(b, second.id(), 1);
            Wire.update(b, 1, 6, "six");
        });

        assertThat(first.updates).containsExactly("UPDATE fx/EURUSD #5 sent before the server saw the second SUBSCRIBE",
                "UPDATE fx/EURUSD #6 six");
        assertThat(second.updates).containsExactly("SNAPSHOT fx/EURUSD #5 five", "UPDATE fx/EURUSD #6 six");
    }

    @Test
    void subscriptionErrorFailsConfirmedTellsTheListenerAndDropsIt() {
        c.open();
        Recorder r = c.subscribe("fx/#");
        c.sent();
        c.fromServer(b -> {
            WireCodec.writeError(b, ErrorCode.TOO_MANY_SUBSCRIPTIONS, r.id(), "more than 2 subscriptions");
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.update(b, 1, 1, "not for a dropped subscription");
        });

        assertThat(r.subscription.confirmed()).isCompletedExceptionally();
        assertThatThrownBy(() -> r.subscription.confirmed().get()).hasCauseInstanceOf(RingcastException.class)
                .cause().hasMessageContaining("TOO_MANY_SUBSCRIPTIONS").hasMessageContaining("more than 2");
        assertThat(r.errors).singleElement().extracting(RingcastException::code)
                .isEqualTo(ErrorCode.TOO_MANY_SUBSCRIPTIONS);
        assertThat(r.updates).isEmpty();
        r.subscription.close();
        assertThat(c.sent()).isEmpty(); // dropped already: no UNSUBSCRIBE
        assertThat(c.channel.isOpen()).isTrue(); // not fatal
    }

    @Test
    void publishErrorFailsThatPublishOnly() throws Exception {
        c.open();
        CompletableFuture<Long> bad = c.publish("a/b", "x");
        CompletableFuture<Long> good = c.publish("a/c", "y");
        c.fromServer(b -> {
            WireCodec.writeError(b, ErrorCode.INVALID_PATH, FIRST_CORRELATION_ID, "path 'a/b' too deep");
            WireCodec.writePublishAck(b, FIRST_CORRELATION_ID + 1, 1);
        });

        assertThat(good.get()).isEqualTo(1L);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, bad::get);
        assertThat(((RingcastException) e.getCause()).code()).isEqualTo(ErrorCode.INVALID_PATH);
        assertThat(c.inFlight).hasValue(0);
    }

    @Test
    void unsubscribeIsSentAndStopsDelivery() {
        c.open();
        Recorder r = c.subscribe("fx/#");
        c.fromServer(b -> WireCodec.writeSubscribed(b, r.id(), 0));
        c.sent();
        r.subscription.close();
        r.subscription.close();
        assertThat(c.sent()).containsExactly("UNSUBSCRIBE " + r.id());
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.update(b, 1, 1, "late");
        });
        assertThat(r.updates).isEmpty();
    }

    @Test
    void fatalErrorIsTheDisconnectReasonWithTheCloseCode() {
        c.open();
        Recorder r = c.subscribe("fx/#");
        CompletableFuture<Long> unacked = c.publish("fx/a", "v");
        c.fromServer(b -> WireCodec.writeError(b, ErrorCode.SLOW_CONSUMER, 0, "4 MiB unsent"));
        c.channel.writeInbound(new CloseWebSocketFrame(1008, "slow consumer"));

        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.endedByFatalError()).isTrue();
        assertThat(c.handler.closeCode()).isEqualTo(1008);
        RingcastException reason = c.handler.disconnectReason();
        assertThat(reason.code()).isEqualTo(ErrorCode.SLOW_CONSUMER);
        assertThat(reason.closeCode()).isEqualTo(1008);
        assertThat(reason).hasMessageContaining("4 MiB unsent");

        c.reconnect();
        assertThat(r.errors).singleElement().satisfies(e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SLOW_CONSUMER);
            assertThat(e.closeCode()).isEqualTo(1008);
        });
        // the publish may or may not have been applied: it goes again, first, on the next session
        assertThat(unacked).isNotDone();
        c.open();
        assertThat(c.sent()).containsExactly("SUBSCRIBE " + r.id() + " fx/# {}",
                "REPUBLISH " + FIRST_CORRELATION_ID + " fx/a v");
        c.fromServer(b -> WireCodec.writePublishAck(b, FIRST_CORRELATION_ID, 7));
        assertThat(unacked).isCompletedWithValue(7L);
    }

    @Test
    void reconnectForgetsAliasesAndResubscribesWithTheLastSequences() {
        c.open();
        Recorder fx = c.subscribe("fx/#");
        Recorder one = c.subscribe("eq/ACME");
        Recorder fresh = c.subscribe("eq/#"); // never confirmed: sent again without a resume list
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            WireCodec.writeTopic(b, 2, "fx/GBPUSD");
            WireCodec.writeTopic(b, 3, "eq/ACME");
            Wire.snapshot(b, fx.id(), 1, 41, 0, "a");
            Wire.snapshot(b, fx.id(), 2, 7, 0, "b");
            WireCodec.writeSubscribed(b, fx.id(), 2);
            Wire.snapshot(b, one.id(), 3, 3, 0, "c");
            WireCodec.writeSubscribed(b, one.id(), 1);
            Wire.update(b, 1, 42, "d");
        });
        c.sent();

        c.reconnect();
        assertThat(c.sent()).isEmpty();
        c.open();
        assertThat(c.sent()).containsExactly(
                "SUBSCRIBE " + fx.id() + " fx/# {fx/EURUSD=42, fx/GBPUSD=7}",
                "SUBSCRIBE " + one.id() + " eq/ACME {eq/ACME=3}",
                "SUBSCRIBE " + fresh.id() + " eq/# {}");

        // resumed subscriptions take replayed updates before SUBSCRIBED; a duplicate is still dropped
        c.fromServer(b -> {
            WireCodec.writeTopic(b, 1, "fx/EURUSD");
            Wire.update(b, 1, 42, "dup");
            Wire.update(b, 1, 43, "e");
        });
        assertThat(fx.updates).endsWith("UPDATE fx/EURUSD #42 d", "UPDATE fx/EURUSD #43 e");

        // alias 3 was announced on the old connection only
        c.fromServer(b -> Wire.update(b, 3, 4, "unknown alias"));
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("alias 3");
    }

    @Test
    void resumeListIsCutToTheServersFrameLimit() {
        c.open();
        Recorder all = c.subscribe("#");
        c.fromServer(b -> {
            for (int i = 1; i <= 100; i++) {
                WireCodec.writeTopic(b, i, String.format("topic/%03d", i));
                Wire.snapshot(b, all.id(), i, i, 0, "v");
            }
            WireCodec.writeSubscribed(b, all.id(), 100);
        });
        c.sent();
        c.reconnect();
        c.open(256, 0);
        var frames = c.sentFrames();
        assertThat(frames).singleElement().satisfies(f -> assertThat(f.readableBytes()).isLessThanOrEqualTo(256));
        String subscribe = Wire.decodeClientFrame(frames.get(0)).get(0);
        frames.forEach(f -> f.release());
        int entries = subscribe.split("=", -1).length - 1;
        assertThat(entries).isBetween(5, 20); // (256 - 16) / (2 + 9 + 8)
    }

    @Test
    void pingsWhenWriteIdleAndGivesUpWhenReadIdle() {
        c.open(1 << 20, 30_000);
        IdleStateHandler idle = (IdleStateHandler) c.channel.pipeline().get(ConnectionHandler.IDLE_HANDLER_NAME);
        assertThat(idle.getWriterIdleTimeInMillis()).isEqualTo(10_000);
        assertThat(idle.getReaderIdleTimeInMillis()).isEqualTo(35_000);

        c.channel.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT);
        c.channel.pipeline().fireUserEventTriggered(IdleStateEvent.WRITER_IDLE_STATE_EVENT);
        assertThat(c.sent()).containsExactly("PING 1", "PING 2");

        c.channel.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT);
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessage("nothing received from the server for 35000 ms");
    }

    @Test
    void textFrameEndsTheConnection() {
        c.open();
        c.channel.writeInbound(new TextWebSocketFrame("hi"));
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("text frame");
        assertThat(c.handler.endedByFatalError()).isFalse();
    }

    @Test
    void messagesBeforeWelcomeAndMalformedFramesEndTheConnection() {
        c.channel.writeInbound(Wire.frame(b -> WireCodec.writeTopic(b, 1, "a")));
        assertThat(c.channel.isOpen()).isFalse();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("TOPIC before WELCOME");

        EmbeddedConnection other = new EmbeddedConnection().open();
        other.channel.writeInbound(Wire.frame(b -> b.writeByte(0x84).writeInt(100)));
        assertThat(other.channel.isOpen()).isFalse();
        assertThat(other.handler.disconnectReason()).hasMessageContaining("truncated");
        other.close();
    }

    @Test
    void unknownErrorCodeIsTheReasonWhenTheConnectionThenCloses() {
        c.open();
        c.fromServer(b -> {
            b.writeByte(0x87);
            int lengthAt = b.writerIndex();
            b.writeInt(0);
            b.writeShort(99);
            b.writeInt(0);
            WireCodec.writeString(b, "something new");
            b.setInt(lengthAt, b.writerIndex() - lengthAt - 4);
        });
        assertThat(c.channel.isOpen()).isTrue();
        c.channel.close();
        assertThat(c.handler.disconnectReason()).hasMessageContaining("error 99: something new");
        assertThat(c.handler.endedByFatalError()).isTrue();
    }
}
