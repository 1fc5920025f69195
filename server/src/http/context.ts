/**
 * @module
 * What the route modules share with the app that mounts them: the Hono environment and the route
 * context (the store, the node timeout, and authorization by operation). Its own module, so that
 * `app.ts` imports the routes and the routes import only this.
 */
import type { GuardedOperation } from '@orbit/generated';
import type { Principal, Store } from '../store/store.ts';

export interface AppEnv {
  Variables: { requestId: string };
}

/** What every route handler gets. */
export interface RouteContext {
  readonly store: Store;
  /** A node silent for this long is gone: its sessions are no longer listed. */
  readonly nodeTtlMs: number;
  /** Authenticates the request's bearer token and checks the permission `operation` needs. */
  authorize(request: Request, operation: GuardedOperation): Promise<Principal>;
}
