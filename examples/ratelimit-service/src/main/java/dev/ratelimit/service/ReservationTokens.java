package dev.ratelimit.service;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import dev.ratelimit.Reservation;
import dev.ratelimit.spi.Mark;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Reservation tokens: what settles a reservation on any instance (its key, policies, estimate and
 * marks, an identity and an expiry), signed with HMAC-SHA256 so that no client can forge or alter
 * one into a larger give-back. A token is {@code base64url(payload || mac)}; its payload is read
 * only once its MAC has been verified.
 */
final class ReservationTokens {
  private static final int VERSION = 1;
  private static final int ID_BYTES = 16;
  private static final int MAC_BYTES = 32;
  private static final String HMAC = "HmacSHA256";
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

  private final SecretKeySpec secret;
  private final Duration ttl;
  private final InstantSource clock;
  private final SecureRandom random = new SecureRandom();

  /**
   * @param secret the signing key's bytes
   * @param ttl how long a token can be settled
   * @param clock the limiter's clock, which expiries are read on
   */
  ReservationTokens(byte[] secret, Duration ttl, InstantSource clock) {
    this.secret = new SecretKeySpec(secret.clone(), HMAC);
    this.ttl = ttl;
    this.clock = clock;
  }

  /** How long a token can be settled. */
  Duration ttl() {
    return ttl;
  }

  /** A token of an allowed reservation, and when it expires. */
  Issued issue(Reservation reservation) {
    byte[] id = new byte[ID_BYTES];
    random.nextBytes(id);
    Instant expires = clock.instant().plus(ttl);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.write(id);
      out.writeLong(expires.toEpochMilli());
      out.writeLong(reservation.estimate());
      writeText(out, reservation.key());
      out.writeShort(reservation.policies().size());
      for (int i = 0; i < reservation.policies().size(); i++) {
        Policy p = reservation.policies().get(i);
        writeText(out, p.name());
        out.writeLong(p.limit());
        out.writeLong(p.window().getSeconds());
        out.writeInt(p.window().getNano());
        out.writeByte(p.algorithm().ordinal());
        out.writeLong(p.burst());
        Mark mark = reservation.marks().get(i);
        out.writeBoolean(mark != null);
        if (mark != null) {
          out.writeLong(mark.at());
          out.writeLong(mark.fraction());
          out.writeLong(mark.ledger());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    byte[] payload = bytes.toByteArray();
    byte[] token = Arrays.copyOf(payload, payload.length + MAC_BYTES);
    System.arraycopy(mac(payload), 0, token, payload.length, MAC_BYTES);
    return new Issued(ENCODER.encodeToString(token), expires);
  }

  /**
   * The reservation a token carries, its policies looked up by name.
   *
   * @param policies the configured policy of a name; null when there is none
   * @throws BadRequest naming {@code token}: missing, truncated, altered or signed with another
   *     secret, expired, or naming a policy that is no longer configured as it was
   */
  Verified read(String token, Function<String, Policy> policies) {
    if (token == null || token.isBlank()) {
      throw new BadRequest("token", "token is required: the token /v1/reserve answered");
    }
    byte[] bytes;
    try {
      bytes = DECODER.decode(token);
    } catch (IllegalArgumentException e) {
      throw new BadRequest("token", "token is not one /v1/reserve issued: it is not base64url (truncated or"
          + " altered?)");
    }
    if (bytes.length < 1 + ID_BYTES + 8 + MAC_BYTES) {
      throw new BadRequest("token", "token is truncated: " + bytes.length + " bytes, too short for one /v1/reserve"
          + " issued");
    }
    byte[] payload = Arrays.copyOf(bytes, bytes.length - MAC_BYTES);
    byte[] given = Arrays.copyOfRange(bytes, payload.length, bytes.length);
    if (!MessageDigest.isEqual(mac(payload), given)) {
      throw new BadRequest("token", "token's signature does not match: it was truncated or altered, or issued by an"
          + " instance with another ratelimit-service.reservations.secret; nothing was settled");
    }
    try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(payload))) {
      int version = in.readUnsignedByte();
      if (version != VERSION) {
        throw new BadRequest("token", "token version " + version + " is not one this service reads (" + VERSION
            + "): it was issued by another version of the service");
      }
      byte[] id = in.readNBytes(ID_BYTES);
      Instant expires = Instant.ofEpochMilli(in.readLong());
      if (!clock.instant().isBefore(expires)) {
        throw new BadRequest("token", "token expired at " + expires + " (ratelimit-service.reservations.ttl=" + ttl
            + "): its reservation stays charged at its estimate");
      }
      long estimate = in.readLong();
      String key = readText(in);
      int n = in.readUnsignedShort();
      List<Policy> reserved = new ArrayList<>(n);
      List<Mark> marks = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        String name = readText(in);
        long limit = in.readLong();
        Duration window = Duration.ofSeconds(in.readLong(), in.readInt());
        Algorithm algorithm = Algorithm.values()[in.readUnsignedByte()];
        Policy then = new Policy(limit, window, algorithm, in.readLong(), name);
        Policy now = policies.apply(then.name());
        if (!then.equals(now)) {
          throw new BadRequest("token", "policy '" + then.name() + "' " + (now == null ? "is no longer configured"
              : "changed since the reservation was made") + ": its units stay charged as they were; nothing was"
              + " settled");
        }
        reserved.add(now);
        marks.add(in.readBoolean() ? new Mark(in.readLong(), in.readLong(), in.readLong()) : null);
      }
      if (in.available() > 0) {
        throw new IOException("trailing bytes");
      }
      return new Verified(HexFormat.of().formatHex(id), key, reserved, estimate, marks, expires);
    } catch (IOException | RuntimeException e) {
      if (e instanceof BadRequest bad) {
        throw bad;
      }
      // signed by this secret yet unreadable: another build's layout under the same version
      throw new BadRequest("token", "token is not one this service can read, although its signature matches");
    }
  }

  private byte[] mac(byte[] payload) {
    try {
      Mac mac = Mac.getInstance(HMAC);
      mac.init(secret);
      return mac.doFinal(payload);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
    }
  }

  /** UTF-16 units, so that every key a check accepts (a lone surrogate too) comes back as it was. */
  private static void writeText(DataOutputStream out, String text) throws IOException {
    out.writeInt(text.length());
    out.writeChars(text);
  }

  private static String readText(DataInputStream in) throws IOException {
    int length = in.readInt();
    if (length < 0 || length > in.available() / 2) {
      throw new IOException("bad length");
    }
    char[] chars = new char[length];
    for (int i = 0; i < length; i++) {
      chars[i] = in.readChar();
    }
    return new String(chars);
  }

  /** A new token and its expiry. */
  record Issued(String token, Instant expiresAt) {}

  /** What a verified token carries; {@code id} is unique per token. */
  record Verified(String id, String key, List<Policy> policies, long estimate, List<Mark> marks, Instant expiresAt) {}

  /** {@code secret}'s bytes, or a random key of this process when it is null. */
  static byte[] secretBytes(String secret) {
    if (secret != null) {
      return secret.getBytes(StandardCharsets.UTF_8);
    }
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    return random;
  }
}
