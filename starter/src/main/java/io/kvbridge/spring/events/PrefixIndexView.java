package io.kvbridge.spring.events;

/**
 * What an application's prefix index holds and did, for operators.
 *
 * <p>An application that keeps a prefix index over engines' KV events ({@code docs/events.md}),
 * such as a router that sends each request where its prefix is cached, declares a bean of this
 * type; the {@code kvbridge} management endpoint then includes its {@link PrefixIndexStatus} under
 * {@code prefixIndex}, and the dashboard shows it in its prefix index panel. Without such a bean,
 * {@code prefixIndex} is {@code null} and the panel is hidden.
 *
 * <p>Threads: {@link #prefixIndex} is called on the thread that reads the endpoint, by as many such
 * threads at a time as read it; it should answer from counters it keeps, without waiting on I/O.
 */
@FunctionalInterface
public interface PrefixIndexView {

  /** The index's figures now; every count only grows over the application's life. */
  PrefixIndexStatus prefixIndex();
}
