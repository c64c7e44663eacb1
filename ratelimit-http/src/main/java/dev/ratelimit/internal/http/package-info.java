/**
 * Internal: what the HTTP front doors share, servlet-free, so that the servlet filter ({@code
 * ratelimit-servlet}), the reactive filter ({@code ratelimit-webflux}) and the gateway's limiter
 * answer alike: limit header values and problem bodies ({@link dev.ratelimit.internal.http.LimitHeaders}),
 * the client address behind trusted proxies ({@link dev.ratelimit.internal.http.ForwardedClient}),
 * and rules compiled for matching ({@link dev.ratelimit.internal.http.CompiledRule}).
 *
 * <p>Not an API: nothing here is for applications, and it may change in any release.
 */
package dev.ratelimit.internal.http;
