package dev.ratelimit.memory;

/**
 * Sixty bytes that no check reads or writes, at the front of every {@link Entry}, so that the
 * fields a check writes normally do not share a 64-byte cache line with another key's: the
 * collector lays live entries out side by side in the order it finds them (the index's hash order),
 * and two threads checking different keys would otherwise write the same lines and slow each other
 * (false sharing; measured in docs/benchmarks.md). With HotSpot's default 12-byte object header
 * (compressed class pointers) the entry's own fields start 72 bytes into the object, so its first
 * written field is at least 72 bytes past the last field of an entry laid out just before it. Not
 * covered: other objects a check writes, such as a SLIDING_LOG's array. Padding at the front only,
 * as Caffeine and JCTools pad their counters with a class of their own: a subclass's fields are laid
 * out after its superclass's, and the {@code int} fills the 4 bytes after the header that a
 * subclass's {@code int} or reference would otherwise take.
 */
abstract class ColdPrefix {
  int p00;
  long p01, p02, p03, p04, p05, p06, p07;
}
