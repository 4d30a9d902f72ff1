// End-to-end latency and rate of the JavaScript client against the demo publisher, in Node.
// Usage: node --experimental-websocket client-js/bench/latency.mjs [ws://127.0.0.1:8080/ws] [seconds]
// (Node 22+: no flag.) The server needs demo.enabled (config/server.yaml has it); each quote carries
// its publish time, so latency = receipt time - publish time, on one machine's clock.
import { connect, UpdateKind } from '../src/ringcast.js';

const url = process.argv[2] ?? 'ws://127.0.0.1:8080/ws';
const seconds = Number(process.argv[3] ?? 10);
const client = await connect(url, { clientName: 'latency-bench' });
const latencies = [];
let received = 0;
client.subscribe('demo/fx/#', u => {
    received++;
    if (u.kind === UpdateKind.UPDATE) latencies.push(Date.now() - u.json().ts);
});
await new Promise(r => setTimeout(r, seconds * 1000));
client.close();
latencies.sort((a, b) => a - b);
const at = q => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
console.log(JSON.stringify({ url, seconds, received, perSecond: Math.round(received / seconds),
    p50Ms: at(0.5), p99Ms: at(0.99), p999Ms: at(0.999), maxMs: latencies[latencies.length - 1] }));
