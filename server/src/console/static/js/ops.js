// Write operations with a stable Idempotency-Key (spec/rules.md#s1-1; spec/README.md, Idempotency).
// A key is made when an operation is first sent and stored in sessionStorage with the exact
// request; it is reused whenever the same operation is sent again and removed once a definitive
// answer arrives. Without an answer (network failure, 5xx) the operation stays, and a retry resends
// the original key and body, so the server applies it at most once and answers a repeat with the
// original receipt (`deduplicated: true`).

import { apiRequest } from './api.js';

const STORE_KEY = 'orbit.console.operations';
const listeners = new Set();

function load() {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORE_KEY) ?? '[]');
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function save(operations) {
  if (operations.length === 0) sessionStorage.removeItem(STORE_KEY);
  else sessionStorage.setItem(STORE_KEY, JSON.stringify(operations));
  for (const listener of listeners) listener(operations);
}

/** 128 random bits as hex: a fresh Idempotency-Key (works outside secure contexts too). */
export function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export function pendingOperations() {
  return load();
}

export function onOperationsChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function discardOperation(operationId) {
  save(load().filter((op) => op.id !== operationId));
}

async function send(operation) {
  try {
    const answer = await apiRequest(operation.method, operation.path, { body: operation.body, key: operation.key });
    discardOperation(operation.id);
    return answer;
  } catch (error) {
    if (error?.retryable) error.operation = operation;
    else discardOperation(operation.id);
    throw error;
  }
}

/**
 * Sends a write. The same method, path and body as an unanswered earlier operation reuse its key;
 * anything else gets a new key.
 */
export function runOperation({ method, path, body, label }) {
  const identity = `${method} ${path} ${JSON.stringify(body)}`;
  const operations = load();
  let operation = operations.find((op) => op.identity === identity);
  if (!operation) {
    operation = { id: newKey(), identity, key: newKey(), method, path, body, label, created_at: new Date().toISOString() };
    save([...operations, operation]);
  }
  return send(operation);
}

/** Resends a kept operation with its original key and body. */
export function retryOperation(operationId) {
  const operation = load().find((op) => op.id === operationId);
  if (!operation) return Promise.reject(new Error('This operation is no longer kept.'));
  return send(operation);
}
