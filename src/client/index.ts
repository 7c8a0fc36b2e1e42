export { type Fetch, HttpClient, type HttpClientOptions, problemToError } from './http.js';
export { LOCAL_DEFAULT_USER, LocalClient } from './local.js';
export type * from './types.js';
