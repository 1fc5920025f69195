/**
 * @module
 * The one plan of what the suite needs from a server's credential store: one credential per role
 * (README.md, "Five minutes"), in which namespace, under which application, with which
 * permissions, and on which queues. Whoever creates the credentials — `bootstrap.command` in spawn
 * mode, `orbit conformance-config`, the repository's own tests — passes a function that creates
 * one, and `bootstrapRoles` turns its answers into the configuration's `credentials` and `queues`.
 */
import type { Credential, Role } from './config.ts';
import { ROLES } from './config.ts';

/** Which namespace, application and permissions each role gets. */
export const BOOTSTRAP_PLAN: Readonly<
  Record<Role, { readonly otherNamespace: boolean; readonly application: string; readonly permissions: string }>
> = {
  full: { otherNamespace: false, application: 'conformance-app', permissions: 'events:manage,events:read,events:consume' },
  sameNamespace: { otherNamespace: false, application: 'conformance-app-2', permissions: 'events:manage,events:read,events:consume' },
  readOnly: { otherNamespace: false, application: 'conformance-app', permissions: 'events:read' },
  consumeOnly: { otherNamespace: false, application: 'conformance-app', permissions: 'events:consume' },
  noEvents: { otherNamespace: false, application: 'conformance-app', permissions: 'results:publish' },
  otherNamespace: { otherNamespace: true, application: 'conformance-app', permissions: 'events:manage,events:read,events:consume' },
  publisher: { otherNamespace: false, application: 'conformance-publisher', permissions: 'results:publish' },
};

/** The namespaces of the plan, unless the configuration names others. */
export const BOOTSTRAP_NAMESPACES = { namespace: 'conformance', otherNamespace: 'conformance-other' } as const;

/**
 * The queues every credential is scoped to, in this order: the first is `queues.primary`, the
 * second `queues.secondary` (and the first of `otherNamespace` its `queues.otherNamespace`).
 */
export const BOOTSTRAP_QUEUES: readonly string[] = ['conformance-a', 'conformance-b'];

/** One credential to create. */
export interface RoleRequest {
  readonly role: Role;
  readonly namespace: string;
  readonly application: string;
  readonly permissions: readonly string[];
  /** The queue names (`BOOTSTRAP_QUEUES`); a command that names its own queues may ignore them. */
  readonly queues: readonly string[];
}

/** What creating one answers: the shape `orbit bootstrap --json` prints and `bootstrap.command` must print. */
export interface BootstrapOutput {
  readonly token: string;
  readonly credential_id?: string;
  /** Queue name → id, in the order the queues were asked for. */
  readonly queue_ids?: Readonly<Record<string, string>>;
}

export interface Bootstrapped {
  readonly credentials: Partial<Record<Role, Credential>>;
  readonly queues: { primary?: string; secondary?: string; otherNamespace?: string };
}

/**
 * Creates a credential for every role that `have` lacks, one at a time and in the order of
 * `ROLES`, and fills in the queues the configuration does not already name.
 */
export async function bootstrapRoles(
  create: (request: RoleRequest) => Promise<BootstrapOutput>,
  options: {
    readonly namespace?: string;
    readonly otherNamespace?: string;
    readonly have?: Bootstrapped;
  } = {},
): Promise<Bootstrapped> {
  const credentials: Partial<Record<Role, Credential>> = { ...options.have?.credentials };
  const queues = { ...options.have?.queues };
  for (const role of Object.keys(ROLES) as Role[]) {
    if (credentials[role]) continue;
    const plan = BOOTSTRAP_PLAN[role];
    const out = await create({
      role,
      namespace: plan.otherNamespace
        ? (options.otherNamespace ?? BOOTSTRAP_NAMESPACES.otherNamespace)
        : (options.namespace ?? BOOTSTRAP_NAMESPACES.namespace),
      application: plan.application,
      permissions: plan.permissions.split(','),
      queues: BOOTSTRAP_QUEUES,
    });
    credentials[role] = { token: out.token, ...(out.credential_id ? { credentialId: out.credential_id } : {}) };
    const ids = Object.values(out.queue_ids ?? {});
    if (role === 'full') {
      queues.primary ??= ids[0];
      if (ids[1]) queues.secondary ??= ids[1];
    }
    if (role === 'otherNamespace' && ids[0]) queues.otherNamespace ??= ids[0];
  }
  return { credentials, queues };
}
