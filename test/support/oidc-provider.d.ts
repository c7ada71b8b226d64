// oidc-provider (panva) ships no type declarations; the social stand-ins use it untyped.
declare module 'oidc-provider' {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const Provider: any;
  export default Provider;
}
