// Loaded with node --import before the official conformance CLI, whose client sends no
// Authorization header: adds `Bearer $RTN_TOKEN` to each fetch that has none, since
// `rtn serve --http` answers 401 to every request without the token.
// tests/integration/serve_conformance.sh.
const token = process.env.RTN_TOKEN;
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init = {}) => {
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
  return realFetch(input, { ...init, headers });
};
