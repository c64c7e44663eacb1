/**
 * Internal: the one pipeline of the front doors, the servlet filter ({@code ratelimit-servlet}) and
 * {@code @RateLimited} ({@code ratelimit-spring-boot-starter}). The {@link
 * dev.ratelimit.internal.expression.Sandbox} their key and cost expressions are parsed and run in,
 * how a value becomes a key or a cost ({@link dev.ratelimit.internal.expression.Values}), and what
 * a missing key or a bad cost does ({@link dev.ratelimit.internal.expression.Pipeline}).
 *
 * <p>Not an API: nothing here is for applications, and it may change in any release.
 */
package dev.ratelimit.internal.expression;
