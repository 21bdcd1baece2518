package dev.ferret;

/** A setting was invalid; the message names the setting and the rejected value. */
public class ConfigurationException extends FerretException {

    private static final long serialVersionUID = 1L;

    public ConfigurationException(String message) {
        super(message);
    }
}
