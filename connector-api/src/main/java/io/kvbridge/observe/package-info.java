/**
 * What a connector tells the outside about itself: the {@link
 * io.kvbridge.observe.ConnectorObserver} it reports events and timings to (the starter binds one to
 * Micrometer), the kinds of refused input it counts ({@link io.kvbridge.observe.RejectedInput}),
 * and the spans of a transfer with their W3C trace context ({@link
 * io.kvbridge.observe.TransferTracer}, {@link io.kvbridge.observe.TraceContext}).
 *
 * <p>Observers never decide anything: a failing or slow observer cannot change what the connector
 * does.
 */
package io.kvbridge.observe;
