/** Where a document lives (decisions §2). `project` `_tenant` holds tenant-wide documents. */
export interface DocumentKey {
  readonly tenant: string;
  readonly project: string;
  readonly path: string;
}
