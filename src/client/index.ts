export { type Fetch, HttpClient, type HttpClientOptions } from './http.js';
export { problemToError } from './http-errors.js';
export { LOCAL_DEFAULT_USER, LocalClient } from './local.js';
export type * from './types.js';
