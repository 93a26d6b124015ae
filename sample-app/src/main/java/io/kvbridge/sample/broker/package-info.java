/**
 * KV events through a broker, for fleets: each node publishes its engine's batches to NATS
 * JetStream and its latest snapshot to a key-value bucket ({@link
 * io.kvbridge.sample.broker.NatsEventPublisher}); the router reads them there ({@code
 * io.kvbridge.sample.router.NatsEventFeeds}), so its index survives its own restart and the
 * broker's, and any number of routers agree. Specified in {@code docs/events.md}.
 */
package io.kvbridge.sample.broker;
