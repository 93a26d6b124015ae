/**
 * A router's prefix index as the {@code kvbridge} management endpoint and the dashboard show it: an
 * application that keeps a {@link io.kvbridge.events.PrefixIndex} over its engines' KV events
 * declares a {@link io.kvbridge.spring.events.PrefixIndexView}, and its {@link
 * io.kvbridge.spring.events.PrefixIndexStatus} appears next to the connectors' status.
 */
package io.kvbridge.spring.events;
