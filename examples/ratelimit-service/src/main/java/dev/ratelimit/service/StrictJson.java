package dev.ratelimit.service;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

/**
 * JSON as the OpenAPI document types it: {@code "cost": 1.5}, {@code "cost": "3"}, {@code "cost": ""}
 * and {@code "key": 42} are 400s naming the field, not silently truncated, converted or dropped. (Unknown
 * fields are refused by {@code spring.jackson.deserialization.fail-on-unknown-properties}.)
 */
@Configuration(proxyBeanMethods = false)
class StrictJson {

  @Bean
  JsonMapperBuilderCustomizer strictRequestTypes() {
    return builder -> builder
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION) // {"cost":5,"cost":1} is not cost 1
        .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
        .withCoercionConfig(LogicalType.Integer, config -> config
            .setAcceptBlankAsEmpty(false) // "" and "  " are strings too, not a missing cost
            .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
        .withCoercionConfig(LogicalType.Textual, config -> config
            .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail));
  }
}
