package dev.ferret.runtime.query;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which paths a document class refuses; runs without a database. */
class PropertyTypesTest {

    public abstract static class Payment {
    }

    public interface Note {
    }

    public record Order(String id, Payment payment, Note note, Map<String, String> tags, Customer customer) {
    }

    public static final class Customer {
        private String name;

        public String getName() {
            return name;
        }
    }

    @Test
    void belowAnAbstractClassAnInterfaceOrAMapAnyKeyIsTakenSinceTheJsonIsTheValuesOwn() {
        for (String path : new String[] {"payment.last4", "note.text", "tags.colour"}) {
            assertThatCode(() -> PropertyTypes.requireDeclared(Order.class, PropertyPath.parse(path)))
                    .as(path).doesNotThrowAnyException();
        }
    }

    @Test
    void aBeansGettersAndFieldsAreItsPropertiesAndATypoNamesTheNearest() {
        assertThatCode(() -> PropertyTypes.requireDeclared(Order.class, PropertyPath.parse("customer.name")))
                .doesNotThrowAnyException();
        assertThatThrownBy(() -> PropertyTypes.requireDeclared(Order.class, PropertyPath.parse("customer.nmae")))
                .hasMessageContaining("Customer has no property 'nmae' (did you mean 'name'?)");
        assertThatThrownBy(() -> PropertyTypes.requireDeclared(Order.class, PropertyPath.parse("custmer.name")))
                .hasMessageContaining("Order has no property 'custmer' (did you mean 'customer'?)");
    }
}
