package io.ringcast.it;

import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WindowType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A real headless Chromium driven through WebDriver: Debian's {@code chromium} and
 * {@code chromium-driver} (installed by {@code scripts/test.sh}), never a browser a test tool
 * downloads. {@code CHROMIUM_BIN} and {@code CHROMEDRIVER_BIN} point elsewhere.
 */
final class Chromium implements AutoCloseable {
    private static final String BROWSER = System.getenv().getOrDefault("CHROMIUM_BIN", "/usr/bin/chromium");
    private static final String DRIVER = System.getenv().getOrDefault("CHROMEDRIVER_BIN", "/usr/bin/chromedriver");
    /**
     * Runs {@code arguments[0]}, the body of an async function of {@code args}, and hands WebDriver
     * its result, or its error as text so that a failing page script fails the test with its stack.
     */
    private static final String ASYNC_WRAPPER = """
            const done = arguments[arguments.length - 1];
            const body = arguments[0];
            const args = Array.prototype.slice.call(arguments, 1, arguments.length - 1);
            new Function('args', 'return (async () => {' + body + '})();')(args).then(
                r => done({ ok: r === undefined ? null : r }),
                e => done({ error: String(e && e.stack ? e.stack : e) }));
            """;

    final ChromeDriver driver;

    /** @param extraArguments more command-line switches, e.g. {@code --ignore-certificate-errors} */
    Chromium(String... extraArguments) {
        for (String path : List.of(BROWSER, DRIVER)) {
            if (!Files.isExecutable(Path.of(path))) {
                throw new IllegalStateException(path + " is missing: the browser tests need Debian's chromium and "
                        + "chromium-driver, which scripts/test.sh installs (apt-get install chromium chromium-driver)");
            }
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(BROWSER);
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", "--window-size=1400,1000");
        options.addArguments(extraArguments);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(DRIVER))
                .usingAnyFreePort()
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(60));
    }

    void open(String url) {
        driver.get(url);
    }

    /**
     * Runs {@code body} in a tab of its own, closed afterwards: for what leaves a tab changed, such
     * as freezing it (after a thaw, the demo board of that tab painted no more frames here).
     */
    void inNewTab(ThrowingRunnable body) throws Exception {
        String original = driver.getWindowHandle();
        driver.switchTo().newWindow(WindowType.TAB);
        try {
            body.run();
        } finally {
            driver.close();
            driver.switchTo().window(original);
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /**
     * Runs {@code body} as the body of an async function in the page ({@code args} are its
     * arguments, {@code await} allowed) and returns what it returns, as WebDriver converts it
     * (numbers as Long or Double, arrays as lists, objects as maps).
     */
    Object run(String body, Object... args) {
        Object[] all = new Object[args.length + 1];
        all[0] = body;
        System.arraycopy(args, 0, all, 1, args.length);
        Object result = driver.executeAsyncScript(ASYNC_WRAPPER, all);
        if (!(result instanceof Map<?, ?> map)) {
            throw new AssertionError("page script returned " + result);
        }
        if (map.containsKey("error")) {
            throw new AssertionError("page script failed: " + map.get("error"));
        }
        return map.get("ok");
    }

    /**
     * Waits, inside the page, until {@code condition} (a JavaScript expression) is truthy: one
     * WebDriver call, not one per check, so the page's thread is left to the page.
     */
    void waitFor(String condition, Duration timeout, String what) {
        Object met = run("""
                const deadline = Date.now() + args[1];
                for (;;) {
                  try { if (eval(args[0])) return true; } catch (e) { /* not there yet */ }
                  if (Date.now() > deadline) return false;
                  await new Promise(r => setTimeout(r, 20)); // the poll interval, not a wait for an outcome
                }
                """, condition, timeout.toMillis());
        if (!Boolean.TRUE.equals(met)) {
            throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what
                    + " (" + condition + ")");
        }
    }

    void waitFor(String condition, String what) {
        waitFor(condition, Duration.ofSeconds(25), what);
    }

    /**
     * Freezes the page as a browser freezes a background tab (Page Lifecycle: no timers, no
     * events, no script; WebDriver calls into the page wait), or makes it active again.
     */
    void frozen(boolean frozen) {
        driver.executeCdpCommand("Page.setWebLifecycleState", Map.of("state", frozen ? "frozen" : "active"));
    }

    /** A synchronous expression evaluated in the page. */
    Object eval(String expression) {
        return ((JavascriptExecutor) driver).executeScript("return " + expression);
    }

    long evalLong(String expression) {
        Object v = eval(expression);
        return v == null ? -1 : ((Number) v).longValue();
    }

    /** Saves a screenshot under {@code target/screenshots/}, for people to look at. */
    Path screenshot(String name) throws IOException {
        Path dir = Path.of("target", "screenshots");
        Files.createDirectories(dir);
        Path file = dir.resolve(name + ".png");
        Files.write(file, driver.getScreenshotAs(OutputType.BYTES));
        return file;
    }

    @Override
    public void close() {
        driver.quit();
    }
}
