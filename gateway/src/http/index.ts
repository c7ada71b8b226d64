/** @module gateway/http The gateway's HTTP layer: middleware, errors and metrics (cookies are libs/auth's). */
export { createHttpLayer, type HttpLayer, type HttpLayerOptions } from './layer.ts';
export { jsonBody, parseJsonBody, readRawBody, MAX_BODY_BYTES } from './body.ts';
export { clientInfo, clientIpMiddleware, compileTrustedProxies, normaliseIp, resolveClientIp, type ClientInfo, type TrustedProxies } from './client-ip.ts';
export { cors, CORS_ALLOWED_HEADERS } from './cors.ts';
export { csrf, checkCsrf, isCsrfExempt } from './csrf.ts';
export { deadline, requestDeadline, DEFAULT_DEADLINE_MS } from './deadline.ts';
export { createErrorHandler, graphqlErrorBody, isGraphqlPath, sendError, sendErrorFor } from './errors.ts';
export { createHttpMetrics, routeLabel, startMetricsServer, type MetricsServer } from './metrics.ts';
export { v1NotFound } from './not-found.ts';
export { compileOriginPolicy, isListedOrigin, parseOrigin, type OriginPolicy } from './origins.ts';
export { MemoryRateLimiter, isRateLimitExempt, rateLimit, rateLimitedError, type RateLimiter } from './rate-limit.ts';
export { RedisRateLimiter } from './rate-limit-redis.ts';
export { requestPath } from './request-path.ts';
export { addResponseHeaders, createGatewayServer, GatewayResponse } from './response.ts';
export { securityHeaders } from './security-headers.ts';
