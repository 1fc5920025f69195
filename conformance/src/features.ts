/**
 * @module
 * Optional capabilities a server declares in its configuration. A case that needs one is skipped
 * when it is not declared, never failed.
 */
export const FEATURES = {
  'results-http': 'the server implements the HTTP result seam POST /v1/queues/{queue_id}/results (cases that test the seam itself)',
  'batch-publish':
    "the server implements Orbit's batch publish POST /v1/queues/{queue_id}/results:batch (an extension of the result seam; " +
    'needs results-http as well)',
  retention: 'results can be pruned (the configuration gives retention.command)',
  'connection-limit': 'the suite may open limits.maxConnections event connections to one node',
  'subscription-limit': 'the suite may fill the namespace of the full credential up to 64 subscriptions (the namespace holds nothing else)',
  'request-timeout': 'the suite may hold a request open for timing.requestTimeoutMs to observe the server-side timeout',
  'queue-list': "the server implements Orbit's list of the credential's queues GET /v1/queues (an extension to the seed)",
  history: "the server implements Orbit's configuration history GET /v1/subscriptions/{id}/history (an extension to the seed)",
  'attempt-budget':
    "the configuration gives attemptBudget.command, which sets a delivery's attempts and attempt_budget directly, " +
    'so the 1000000 cap can be reached',
} as const;
export type Feature = keyof typeof FEATURES;
