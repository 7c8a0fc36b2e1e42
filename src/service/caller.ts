/**
 * Who asks (decisions §6): a user of a tenant, working in a project, with a role. The CLI acts as
 * an operator (`admin`); REST callers get the role of their token; agent tools act as their user.
 */
export interface Caller {
  readonly tenant: string;
  readonly project: string;
  readonly user: string;
  readonly role: 'read' | 'write' | 'admin';
}
