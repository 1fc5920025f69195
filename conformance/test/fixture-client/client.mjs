/**
 * A small orbit.events.v1 consumer that speaks the client harness protocol, with planted faults
 * (conformance/test/client-faults.test.ts checks that each is caught by exactly the cases meant
 * for it). Without flags it is correct; each flag breaks one rule:
 *
 *   --fault ack-before-store    ACK first, keep the event in memory and store it 300 ms later (spec/rules.md#s6-8)
 *   --fault dedupe-by-task      deduplicate by task id instead of event id (#s6-7)
 *   --fault guessed-epoch       answer DELIVERY_LEASE_LOST with the next epoch and the old secret (#s6-17)
 *   --fault no-heartbeat        never send events.ping (#s7-2)
 *   --fault reconnect-on-fatal  reconnect after every close and refusal (spec/README.md#close-codes)
 *   --fault token-in-url        also put the token in the connect URL (#s1-3)
 *   --fault ignore-retry-after  wait a fixed second after a 429 or 503, whatever its Retry-After says (#s7-20)
 *
 * Plain JavaScript with `ws` only, so that it starts in a few milliseconds: the fault test runs the
 * whole catalogue once per fault. The store is a JSON file replaced atomically and fsynced.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';

const { values } = parseArgs({ options: { fault: { type: 'string', multiple: true, default: [] } } });
const faults = new Set(values.fault);
const RETRYABLE_CLOSES = new Set([1001, 1006, 1011, 1012, 1013]);

let text = '';
for await (const chunk of process.stdin) text += chunk;
const config = JSON.parse(text);

const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const newId = () => randomBytes(16).toString('hex');

function load(name, fallback) {
  try {
    return JSON.parse(readFileSync(join(config.state_dir, name), 'utf8'));
  } catch {
    return fallback;
  }
}

function save(name, value) {
  const path = join(config.state_dir, name);
  const fd = openSync(`${path}.tmp`, 'w');
  writeSync(fd, JSON.stringify(value));
  fsyncSync(fd);
  closeSync(fd);
  renameSync(`${path}.tmp`, path);
}

/** event id -> {task_id, result_json}; the proofs not yet answered, by delivery id. */
const events = load('events.json', {});
const proofs = load('proofs.json', {});
/** Events ACKed but not yet stored (the ack-before-store fault's in-memory queue). */
const memory = new Map();
report({ type: 'ready', stored: Object.keys(events) });

const seen = (event) => {
  const all = [...Object.entries(events), ...memory.entries()];
  return faults.has('dedupe-by-task') ? all.some(([, e]) => e.task_id === event.snapshot.task_id) : all.some(([id]) => id === event.id);
};

function stop(code, message) {
  if (code) report({ type: 'error', code, message: message ?? code });
  report({ type: 'stopped', code: code ?? null });
  process.exit(0);
}

function connect() {
  let url = `${config.base_url.replace(/^http/, 'ws')}/v1/events/connect`;
  if (faults.has('token-in-url')) url += `?access_token=${encodeURIComponent(config.token)}`;
  const ws = new WebSocket(url, 'orbit.events.v1', { headers: { authorization: `Bearer ${config.token}` }, perMessageDeflate: false });
  let session;
  let fatal;
  let pinger;
  let lastAnswer = Date.now();
  const send = (type, body) => ws.send(JSON.stringify({ protocol_version: '1', type, message_id: newId(), session_id: session, body }));
  /** message_id of each ACK sent -> its proof, to know what a DELIVERY_LEASE_LOST answers. */
  const acks = new Map();
  const ack = (p) => {
    const messageId = newId();
    acks.set(messageId, p);
    ws.send(JSON.stringify({ protocol_version: '1', type: 'event.ack', message_id: messageId, session_id: session, body: p }));
  };
  const guessed = new Set();
  // JSON.parse would round a 20-digit integer: `result` is kept as the text it was sent as.
  let lastText = '';

  ws.on('open', () =>
    ws.send(
      JSON.stringify({
        protocol_version: '1',
        type: 'events.hello',
        message_id: newId(),
        body: { subscription_id: config.subscription_id, capacity: config.capacity },
      }),
    ),
  );
  ws.on('unexpected-response', (_req, res) => {
    let body = '';
    res.on('data', (c) => (body += c));
    res.on('end', () => {
      let code = null;
      try {
        code = JSON.parse(body).error.code;
      } catch {}
      // The fault waits the seed's usual 1 s, so only a longer Retry-After shows it.
      const retryAfterMs = faults.has('ignore-retry-after') ? 1000 : Number(res.headers['retry-after'] ?? 0) * 1000;
      if (res.statusCode === 429 || res.statusCode === 503 || faults.has('reconnect-on-fatal'))
        return setTimeout(connect, Math.max(200, retryAfterMs));
      stop(code, `upgrade refused with ${res.statusCode}`);
    });
  });
  ws.on('message', (data) => {
    lastText = String(data);
    const frame = JSON.parse(lastText);
    lastAnswer = Date.now();
    if (frame.type === 'events.welcome') {
      session = frame.session_id;
      for (const p of Object.values(proofs)) ack(p);
      if (!faults.has('no-heartbeat'))
        pinger = setInterval(() => {
          // No answer for three intervals: the connection is stuck; cut it and reconnect.
          if (Date.now() - lastAnswer > 3 * config.heartbeat_interval_ms) return ws.terminate();
          send('events.ping', {});
        }, config.heartbeat_interval_ms);
    } else if (frame.type === 'event.deliver') deliver(frame.body);
    else if (frame.type === 'ack' && frame.body.delivery_id) {
      delete proofs[frame.body.delivery_id];
      save('proofs.json', proofs);
    } else if (frame.type === 'error' && frame.error.code === 'DELIVERY_LEASE_LOST') {
      const p = acks.get(frame.reply_to);
      if (!p) return;
      if (proofs[p.delivery_id]?.epoch === p.epoch) {
        delete proofs[p.delivery_id];
        save('proofs.json', proofs);
      }
      if (faults.has('guessed-epoch') && !guessed.has(p.delivery_id)) {
        guessed.add(p.delivery_id);
        ack({ ...p, epoch: String(Number(p.epoch) + 1) });
      }
    } else if (frame.type === 'error') fatal = frame.error;
  });

  function deliver({ delivery, event, lease_secret }) {
    const proof = { delivery_id: delivery.id, epoch: delivery.lease_epoch, lease_secret };
    const record = { task_id: event.snapshot.task_id, result_json: 'result' in event.snapshot ? rawResult() : undefined };
    if (seen(event)) report({ type: 'duplicate', event_id: event.id, delivery_id: delivery.id });
    else if (faults.has('ack-before-store')) {
      memory.set(event.id, record);
      setTimeout(() => store(event, delivery, record), 300);
    } else store(event, delivery, record);
    proofs[delivery.id] = proof;
    save('proofs.json', proofs);
    ack(proof);
  }

  function store(event, delivery, record) {
    memory.delete(event.id);
    events[event.id] = record;
    save('events.json', events);
    report({
      type: 'stored',
      event_id: event.id,
      delivery_id: delivery.id,
      task_id: record.task_id,
      event_type: event.type,
      ...(record.result_json ? { result_json: record.result_json } : {}),
    });
  }

  function rawResult() {
    const start = lastText.indexOf('"result":');
    if (start < 0) return undefined;
    let depth = 0;
    let i = start + '"result":'.length;
    const from = i;
    let inString = false;
    for (; i < lastText.length; i++) {
      const c = lastText[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) break;
    }
    return lastText.slice(from, i);
  }

  ws.on('close', (code, reason) => {
    clearInterval(pinger);
    const contractCode = fatal?.code ?? (/^[A-Z_]+$/.test(String(reason)) ? String(reason) : null);
    const retry = contractCode ? contractCode === 'UNAVAILABLE' : RETRYABLE_CLOSES.has(code);
    if (retry || faults.has('reconnect-on-fatal')) setTimeout(connect, 200);
    else stop(contractCode, `closed ${code}`);
  });
  ws.on('error', () => undefined);
}

connect();
