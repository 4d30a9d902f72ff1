package io.ringcast.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code filter} option: a predicate on the fields of a JSON value, such as
 * {@code spread < 0.0005 and venue in ['LSE', 'XETRA']}. Parsed once at subscribe;
 * {@link #matches} decides for one value, once per update for every subscriber with the same filter.
 * The language, its grammar, semantics and limits are docs/subscription-options.md, "filter"; in
 * short:
 * <ul>
 *   <li>{@code or}, {@code and}, {@code not} (that precedence, lowest first), parentheses, and
 *       comparisons {@code path OP literal} ({@code = != < <= > >=}) or {@code path in [literal, ...]};</li>
 *   <li>literals: JSON numbers, strings in single or double quotes, {@code true false null};</li>
 *   <li>numbers compare exactly ({@link NumberLiteral}), strings by code point, {@code true},
 *       {@code false} and {@code null} by equality only;</li>
 *   <li>a comparison of a missing field, or of a value of another type than the literal's (an
 *       object, an array, a string against a number...), is false, {@code !=} included; {@code not}
 *       inverts what is left, so {@code not (x = 1)} holds for a missing {@code x};</li>
 *   <li>a value that is not a JSON object, not UTF-8 JSON, or malformed before every path has been
 *       read, matches nothing. A key repeated in one object: the first occurrence counts.</li>
 * </ul>
 *
 * <p>Evaluation: one Jackson streaming parser per call over the value's bytes in place; every path
 * is looked up in one pass ({@link FieldPathTree}), each comparison is decided the moment its field's
 * token is read (its result is one bit of an int: at most 32 comparisons), and reading stops once
 * every path has been met; then the and/or/not tree is evaluated over those bits. Per call it
 * allocates the parser and its context objects, about 650 bytes (measured with
 * {@code ThreadMXBean.getThreadAllocatedBytes}; 50 more per object level it enters; Jackson's byte
 * and char buffers are recycled), and nothing per comparison: numbers and strings are compared on
 * the characters Jackson holds.
 * Acceptable at one call per update per distinct filter, never per subscriber. A large
 * value of a topic with several views is read once for all of them ({@link ValueIndex}), and
 * each filter then reads only its fields' bytes ({@link #matches(ValueIndex)}).
 *
 * <p>Threads: {@link #parse} anywhere; {@link #matches} from one thread only (the sequencer),
 * asserted: it reuses its parser input and scratch.
 */
final class ValueFilter {
    static final int MAX_TEXT_LENGTH = 1024;
    static final int MAX_COMPARISONS = 32;
    static final int MAX_NESTING = 16;
    static final int MAX_IN_LITERALS = 64;

    private final String text;
    private final Expr expr;
    private final FieldPathTree tree;
    /** The distinct paths, by their index in the tree. */
    private final List<FieldPath> paths;
    /** For each distinct path (its index in the tree), the comparisons on it. */
    private final Comparison[][] comparisonsByPath;
    private final int pathCount;
    private final JsonValueInput input = new JsonValueInput();
    private final NumberLiteral.Scan scan = new NumberLiteral.Scan();
    private long visits;
    // scratch of one matches() call
    private int results;
    private int pathsLeft;

    private ValueFilter(String text, Expr expr, List<FieldPath> paths, List<Comparison> comparisons) {
        this.text = text;
        this.expr = expr;
        this.tree = new FieldPathTree(paths);
        this.paths = List.copyOf(paths);
        this.pathCount = paths.size();
        this.comparisonsByPath = new Comparison[paths.size()][];
        for (int p = 0; p < paths.size(); p++) {
            List<Comparison> on = new ArrayList<>();
            for (Comparison c : comparisons) {
                if (c.pathIndex == p) {
                    on.add(c);
                }
            }
            comparisonsByPath[p] = on.toArray(new Comparison[0]);
        }
    }

    /**
     * The filter {@code text} writes.
     *
     * @throws InvalidOptionsException ({@code filter}) naming the first fault and its column
     */
    static ValueFilter parse(String text) {
        if (text == null || text.isBlank()) {
            throw new InvalidOptionsException(InvalidOptionsException.FILTER, "empty");
        }
        if (text.length() > MAX_TEXT_LENGTH) {
            throw new InvalidOptionsException(InvalidOptionsException.FILTER,
                    "longer than " + MAX_TEXT_LENGTH + " characters (" + text.length() + ")");
        }
        Parser p = new Parser(text);
        Expr expr = p.parseFilter();
        return new ValueFilter(text, expr, new ArrayList<>(p.paths.keySet()), p.comparisons);
    }

    /** The filter as the client wrote it. */
    String text() {
        return text;
    }

    /**
     * Whether the value in {@code length} bytes of {@code value} from {@code index} (absolute;
     * {@code value}'s indices do not move) passes. Never throws for any bytes of the value.
     */
    boolean matches(ByteBuf value, int index, int length) {
        try (JsonParser parser = input.open(value, index, length)) {
            if (parser == null || parser.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            results = 0;
            pathsLeft = pathCount;
            readFields(parser, tree.root, ++visits);
            return expr.eval(results);
        } catch (IOException e) {
            // not JSON, or malformed before every path was read (Jackson's exceptions are IOExceptions)
            return false;
        }
    }

    /** The distinct paths it reads ({@link ValueIndex#of}). */
    List<FieldPath> paths() {
        return paths;
    }

    /**
     * {@link #matches(ByteBuf, int, int)} of the value {@code index} read last, which indexed this
     * filter's paths: the same answer, reading only the bytes of its fields.
     */
    boolean matches(ValueIndex index) {
        if (!index.object()) {
            return false;
        }
        results = 0;
        for (int p = 0; p < pathCount; p++) {
            int id = index.id(paths.get(p));
            if (!index.has(id)) {
                if (!index.complete()) {
                    return false; // a fault came first: malformed before every path was read
                }
                continue; // missing: its comparisons are false
            }
            JsonToken token = index.token(id);
            if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                continue; // compares with no literal: false, whatever it holds
            }
            // the field's bytes alone (a number at the root must end with them), or up to the value's
            // end for a string with a fault inside, which only a comparison that reads it finds
            int start = index.start(id);
            int end = index.end(id) >= 0 ? index.end(id) : index.valueLength();
            try (JsonParser parser = input.open(index.value(), index.valueIndex() + start, end - start)) {
                if (parser == null) {
                    return false;
                }
                JsonToken read = parser.nextToken();
                for (Comparison c : comparisonsByPath[p]) {
                    if (c.test(parser, read, scan)) {
                        results |= 1 << c.bit;
                    }
                }
            } catch (IOException e) {
                return false;
            }
        }
        return expr.eval(results);
    }

    /**
     * Reads the fields of the object whose key is {@code node} (the parser just past its
     * START_OBJECT), deciding the comparisons of the paths that end there and descending into those
     * that go on.
     *
     * @return true once every path has been met: read no further
     */
    private boolean readFields(JsonParser parser, FieldPathTree.Node node, long visit) throws IOException {
        for (FieldPathTree.Node child; (child = FieldPathTree.nextNamed(parser, node, visit)) != null; ) {
            JsonToken token = parser.currentToken();
            if (child.leaf >= 0) {
                for (Comparison c : comparisonsByPath[child.leaf]) {
                    if (c.test(parser, token, scan)) {
                        results |= 1 << c.bit;
                    }
                }
                if (--pathsLeft == 0) {
                    return true;
                }
            }
            if (child.children != null && token == JsonToken.START_OBJECT) {
                if (readFields(parser, child, visit)) {
                    return true;
                }
            } else {
                parser.skipChildren();
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "filter " + text;
    }

    // ---- the expression tree: and/or/not over the comparisons' result bits ----

    private abstract static class Expr {
        abstract boolean eval(int results);

        abstract void describe(StringBuilder b);
    }

    private static void describe(StringBuilder b, Expr[] terms, String keyword) {
        b.append('(');
        for (int i = 0; i < terms.length; i++) {
            if (i > 0) {
                b.append(' ').append(keyword).append(' ');
            }
            terms[i].describe(b);
        }
        b.append(')');
    }

    private static final class Or extends Expr {
        private final Expr[] terms;

        Or(List<Expr> terms) {
            this.terms = terms.toArray(new Expr[0]);
        }

        @Override
        boolean eval(int results) {
            for (Expr t : terms) {
                if (t.eval(results)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        void describe(StringBuilder b) {
            ValueFilter.describe(b, terms, "or");
        }
    }

    private static final class And extends Expr {
        private final Expr[] terms;

        And(List<Expr> terms) {
            this.terms = terms.toArray(new Expr[0]);
        }

        @Override
        boolean eval(int results) {
            for (Expr t : terms) {
                if (!t.eval(results)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        void describe(StringBuilder b) {
            ValueFilter.describe(b, terms, "and");
        }
    }

    private static final class Not extends Expr {
        private final Expr term;

        Not(Expr term) {
            this.term = term;
        }

        @Override
        boolean eval(int results) {
            return !term.eval(results);
        }

        @Override
        void describe(StringBuilder b) {
            b.append("not ");
            term.describe(b);
        }
    }

    // ---- comparisons and literals ----

    enum Op {
        EQ("="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">="), IN("in");

        final String symbol;

        Op(String symbol) {
            this.symbol = symbol;
        }

        static Op ofSymbol(String s) {
            for (Op op : values()) {
                if (op != IN && op.symbol.equals(s)) {
                    return op;
                }
            }
            return null;
        }

        boolean orders() {
            return this == LT || this == LE || this == GT || this == GE;
        }
    }

    /** The type of a literal, and of a value token as a literal would see it. */
    private enum Type {
        NUMBER, STRING, BOOLEAN, NULL, OTHER;

        static Type of(JsonToken token) {
            switch (token) {
                case VALUE_NUMBER_INT:
                case VALUE_NUMBER_FLOAT:
                    return NUMBER;
                case VALUE_STRING:
                    return STRING;
                case VALUE_TRUE:
                case VALUE_FALSE:
                    return BOOLEAN;
                case VALUE_NULL:
                    return NULL;
                default:
                    return OTHER;
            }
        }
    }

    private static final class Literal {
        final Type type;
        final NumberLiteral number;
        final String string;
        final boolean bool;

        private Literal(Type type, NumberLiteral number, String string, boolean bool) {
            this.type = type;
            this.number = number;
            this.string = string;
            this.bool = bool;
        }

        static Literal number(NumberLiteral n) {
            return new Literal(Type.NUMBER, n, null, false);
        }

        static Literal string(String s) {
            return new Literal(Type.STRING, null, s, false);
        }

        static Literal bool(boolean b) {
            return new Literal(Type.BOOLEAN, null, null, b);
        }

        static final Literal NULL = new Literal(Type.NULL, null, null, false);

        /**
         * The value token against this literal: negative, zero or positive; or
         * {@link Integer#MIN_VALUE} when their types differ (then every comparison is false).
         */
        int compare(JsonParser parser, JsonToken token, NumberLiteral.Scan scan) throws IOException {
            if (Type.of(token) != type) {
                return Integer.MIN_VALUE;
            }
            switch (type) {
                case NUMBER:
                    return number.compareValue(parser.getTextCharacters(), parser.getTextOffset(),
                            parser.getTextLength(), scan);
                case STRING:
                    return compareCodePoints(parser.getTextCharacters(), parser.getTextOffset(),
                            parser.getTextLength(), string);
                case BOOLEAN:
                    return (token == JsonToken.VALUE_TRUE) == bool ? 0 : 1;
                default:
                    return 0; // null = null
            }
        }

        @Override
        public String toString() {
            switch (type) {
                case NUMBER:
                    return number.text();
                case STRING:
                    return "'" + string + "'";
                case BOOLEAN:
                    return Boolean.toString(bool);
                default:
                    return "null";
            }
        }
    }

    /**
     * {@code value[offset, offset + length)} against {@code literal} in code point order. Compares
     * UTF-16 units and fixes up the first pair that differs, where UTF-16 order and code point order
     * part: a surrogate (a code point above U+FFFF) must sort after U+E000..U+FFFF, so surrogates
     * move up by 0x2000 and those move down by 0x800 (ICU's u_strCmpCodePointOrder).
     */
    static int compareCodePoints(char[] value, int offset, int length, String literal) {
        int n = Math.min(length, literal.length());
        for (int i = 0; i < n; i++) {
            char a = value[offset + i];
            char b = literal.charAt(i);
            if (a != b) {
                return Integer.compare(codePointOrder(a), codePointOrder(b));
            }
        }
        return Integer.compare(length, literal.length());
    }

    private static int codePointOrder(char c) {
        if (c >= 0xE000) {
            return c - 0x800;
        }
        if (c >= 0xD800) {
            return c + 0x2000;
        }
        return c;
    }

    private static final class Comparison extends Expr {
        /** This comparison's bit in the results. */
        final int bit;
        final FieldPath path;
        /** The index of its path in the filter's distinct paths. */
        final int pathIndex;
        final Op op;
        final Literal[] literals;

        Comparison(int bit, FieldPath path, int pathIndex, Op op, Literal[] literals) {
            this.bit = bit;
            this.path = path;
            this.pathIndex = pathIndex;
            this.op = op;
            this.literals = literals;
        }

        @Override
        boolean eval(int results) {
            return (results & (1 << bit)) != 0;
        }

        @Override
        void describe(StringBuilder b) {
            b.append(path).append(' ').append(op.symbol).append(' ')
                    .append(op == Op.IN ? Arrays.toString(literals) : literals[0].toString());
        }

        /** Whether the value token the parser is at passes. */
        boolean test(JsonParser parser, JsonToken token, NumberLiteral.Scan scan) throws IOException {
            if (op == Op.IN) {
                for (Literal l : literals) {
                    if (l.compare(parser, token, scan) == 0) {
                        return true;
                    }
                }
                return false;
            }
            int c = literals[0].compare(parser, token, scan);
            if (c == Integer.MIN_VALUE) {
                return false;
            }
            switch (op) {
                case EQ:
                    return c == 0;
                case NE:
                    return c != 0;
                case LT:
                    return c < 0;
                case LE:
                    return c <= 0;
                case GT:
                    return c > 0;
                default:
                    return c >= 0;
            }
        }
    }

    // ---- the parser: recursive descent over the text, one character class at a time ----

    /**
     * Reads the grammar of docs/subscription-options.md; what it expects next decides how the next
     * characters are read (a path, an operator, a literal), so a path may start with a digit or '-'.
     */
    private static final class Parser {
        private final String text;
        private int pos;
        private int depth;
        /** Distinct paths in order of first use, each with its index. */
        final Map<FieldPath, Integer> paths = new LinkedHashMap<>();
        final List<Comparison> comparisons = new ArrayList<>();

        Parser(String text) {
            this.text = text;
        }

        Expr parseFilter() {
            Expr e = parseOr();
            skipSpace();
            if (pos < text.length()) {
                if (text.charAt(pos) == ')') {
                    throw fault("')' without a '(' before it", pos);
                }
                throw fault("expected 'and', 'or' or the end" + caseHint(), pos);
            }
            return e;
        }

        private Expr parseOr() {
            Expr first = parseAnd();
            if (!atKeyword("or")) {
                return first;
            }
            List<Expr> terms = new ArrayList<>();
            terms.add(first);
            while (atKeyword("or")) {
                pos += 2;
                terms.add(parseAnd());
            }
            return new Or(terms);
        }

        private Expr parseAnd() {
            Expr first = parseUnary();
            if (!atKeyword("and")) {
                return first;
            }
            List<Expr> terms = new ArrayList<>();
            terms.add(first);
            while (atKeyword("and")) {
                pos += 3;
                terms.add(parseUnary());
            }
            return new And(terms);
        }

        private Expr parseUnary() {
            if (atKeyword("not")) {
                enter(pos);
                pos += 3;
                Expr e = new Not(parseUnary());
                depth--;
                return e;
            }
            return parsePrimary();
        }

        private Expr parsePrimary() {
            skipSpace();
            if (pos < text.length() && text.charAt(pos) == '(') {
                int open = pos;
                enter(open);
                pos++;
                Expr e = parseOr();
                skipSpace();
                if (pos >= text.length() || text.charAt(pos) != ')') {
                    throw fault("expected 'and', 'or' or ')'" + caseHint(), pos,
                            ", to close the '(' at column " + column(open));
                }
                pos++;
                depth--;
                return e;
            }
            return parseComparison();
        }

        private void enter(int at) {
            if (++depth > MAX_NESTING) {
                throw fault("nested more than " + MAX_NESTING + " deep (parentheses and 'not' count)", at);
            }
        }

        private Expr parseComparison() {
            skipSpace();
            int start = pos;
            String word = word();
            if (word.isEmpty()) {
                throw fault("expected a comparison", start);
            }
            if (isKeyword(word)) {
                throw fault("expected a comparison", start, " (" + InvalidOptionsException.quote(word) + " is a keyword)");
            }
            String problem = FieldPath.problem(word);
            if (problem != null) {
                throw fault(problem, start);
            }
            if (comparisons.size() == MAX_COMPARISONS) {
                throw fault("more than " + MAX_COMPARISONS + " comparisons", start);
            }
            FieldPath path = FieldPath.ofValid(word);
            skipSpace();
            Op op;
            List<Literal> literals = new ArrayList<>(1);
            if (atKeyword("in")) {
                op = Op.IN;
                pos += 2;
                skipSpace();
                if (pos >= text.length() || text.charAt(pos) != '[') {
                    throw fault("expected '[' after 'in'", pos);
                }
                pos++;
                while (true) {
                    skipSpace();
                    if (literals.size() == MAX_IN_LITERALS) {
                        throw fault("more than " + MAX_IN_LITERALS + " literals in an 'in' list", pos);
                    }
                    literals.add(literal("in the 'in' list"));
                    skipSpace();
                    if (pos < text.length() && text.charAt(pos) == ']') {
                        pos++;
                        break;
                    }
                    if (pos >= text.length() || text.charAt(pos) != ',') {
                        throw fault("expected ',' or ']' in the 'in' list", pos);
                    }
                    pos++;
                }
            } else {
                int opStart = pos;
                while (pos < text.length() && "=!<>".indexOf(text.charAt(pos)) >= 0) {
                    pos++;
                }
                String symbol = text.substring(opStart, pos);
                if (symbol.isEmpty()) {
                    throw fault("expected a comparison operator after " + InvalidOptionsException.quote(word)
                            + caseHint(), opStart);
                }
                op = Op.ofSymbol(symbol);
                if (op == null) {
                    throw fault("unknown operator " + InvalidOptionsException.quote(symbol)
                            + " (use = != < <= > >= or in)", opStart);
                }
                skipSpace();
                int literalStart = pos;
                Literal l = literal("after " + InvalidOptionsException.quote(symbol));
                if (op.orders() && (l.type == Type.BOOLEAN || l.type == Type.NULL)) {
                    throw fault(InvalidOptionsException.quote(symbol) + " orders numbers and strings only, not "
                            + l, literalStart);
                }
                literals.add(l);
            }
            Integer index = paths.get(path);
            if (index == null) {
                index = paths.size();
                paths.put(path, index);
            }
            Comparison c = new Comparison(comparisons.size(), path, index, op, literals.toArray(new Literal[0]));
            comparisons.add(c);
            return c;
        }

        /** A literal at {@link #pos} (spaces skipped); {@code where} completes "expected a literal ...". */
        private Literal literal(String where) {
            if (pos >= text.length()) {
                throw fault("expected a literal " + where, pos);
            }
            char c = text.charAt(pos);
            if (c == '\'' || c == '"') {
                return Literal.string(string());
            }
            if (c == '-' || c == '.' || c >= '0' && c <= '9') {
                int start = pos;
                while (pos < text.length() && isNumberRunChar(text.charAt(pos))) {
                    pos++;
                }
                String number = text.substring(start, pos);
                NumberLiteral n = NumberLiteral.parse(number);
                if (n == null) {
                    if (NumberLiteral.isJsonNumber(number)) {
                        throw fault("number " + InvalidOptionsException.quote(number) + " out of range (at most "
                                + NumberLiteral.MAX_LITERAL_EXPONENT_DIGITS + " digits of exponent)", start);
                    }
                    throw fault("bad number " + InvalidOptionsException.quote(number), start);
                }
                return Literal.number(n);
            }
            int start = pos;
            String word = word();
            switch (word) {
                case "true":
                    return Literal.bool(true);
                case "false":
                    return Literal.bool(false);
                case "null":
                    return Literal.NULL;
                default:
                    pos = start;
                    if (!word.isEmpty()) {
                        String hint = word.equalsIgnoreCase("true") || word.equalsIgnoreCase("false")
                                || word.equalsIgnoreCase("null") ? " (keywords are lower case)"
                                : " (a string needs quotes: " + InvalidOptionsException.quote(word) + ")";
                        throw fault("expected a literal " + where + hint, start);
                    }
                    throw fault("expected a literal " + where, start);
            }
        }

        /** What a number literal is read as before it is checked: JSON's number characters, and letters so that {@code 1x} is one bad number. */
        private static boolean isNumberRunChar(char c) {
            return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == '_'
                    || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z';
        }

        /**
         * A quoted string at {@link #pos}: {@code '...'} or {@code "..."}, with JSON's escapes
         * ({@code \" \\ \/ \b \f \n \r \t \\uXXXX}) and {@code \'}.
         */
        private String string() {
            int start = pos;
            char quote = text.charAt(pos++);
            StringBuilder s = new StringBuilder();
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c == quote) {
                    pos++;
                    return s.toString();
                }
                if (c != '\\') {
                    s.append(c);
                    pos++;
                    continue;
                }
                int escape = pos;
                if (pos + 1 >= text.length()) {
                    break; // a backslash at the end: unterminated
                }
                char e = text.charAt(pos + 1);
                pos += 2;
                switch (e) {
                    case '"': s.append('"'); break;
                    case '\'': s.append('\''); break;
                    case '\\': s.append('\\'); break;
                    case '/': s.append('/'); break;
                    case 'b': s.append('\b'); break;
                    case 'f': s.append('\f'); break;
                    case 'n': s.append('\n'); break;
                    case 'r': s.append('\r'); break;
                    case 't': s.append('\t'); break;
                    case 'u':
                        int code = 0;
                        for (int k = 0; k < 4; k++) {
                            int digit = pos < text.length() ? Character.digit(text.charAt(pos), 16) : -1;
                            if (digit < 0) {
                                throw fault("bad escape " + InvalidOptionsException.quote(text.substring(escape, pos))
                                        + " (\\u takes 4 hex digits)", escape);
                            }
                            code = code * 16 + digit;
                            pos++;
                        }
                        s.append((char) code);
                        break;
                    default:
                        throw fault("bad escape " + InvalidOptionsException.quote("\\" + e), escape);
                }
            }
            throw fault("unterminated string", start);
        }

        /** The run of path characters and dots at {@link #pos}, which it moves past; maybe empty. */
        private String word() {
            int start = pos;
            while (pos < text.length()) {
                int c = text.codePointAt(pos);
                if (c != '.' && !FieldPath.isSegmentChar(c)) {
                    break;
                }
                pos += Character.charCount(c);
            }
            return text.substring(start, pos);
        }

        /** Whether keyword {@code k} is next (spaces skipped): those letters, then no path character. */
        private boolean atKeyword(String k) {
            skipSpace();
            if (!text.startsWith(k, pos)) {
                return false;
            }
            int after = pos + k.length();
            if (after == text.length()) {
                return true;
            }
            int c = text.codePointAt(after);
            return c != '.' && !FieldPath.isSegmentChar(c);
        }

        private static boolean isKeyword(String word) {
            switch (word) {
                case "and":
                case "or":
                case "not":
                case "in":
                case "true":
                case "false":
                case "null":
                    return true;
                default:
                    return false;
            }
        }

        /** " (keywords are lower case)" when the word at {@link #pos} is a keyword in other case; else "". */
        private String caseHint() {
            int save = pos;
            String w = word();
            pos = save;
            return !isKeyword(w) && isKeyword(w.toLowerCase(Locale.ROOT))
                    ? " (keywords are lower case)" : "";
        }

        private void skipSpace() {
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                pos++;
            }
        }

        /** The 1-based column of {@code index}, in code points. */
        private int column(int index) {
            return text.codePointCount(0, Math.min(index, text.length())) + 1;
        }

        private InvalidOptionsException fault(String what, int at) {
            return fault(what, at, "");
        }

        /** {@code filter: <what> at column <at's column><after>}. */
        private InvalidOptionsException fault(String what, int at, String after) {
            return new InvalidOptionsException(InvalidOptionsException.FILTER,
                    what + " at column " + column(at) + after);
        }
    }

    /**
     * The filter as parsed, fully parenthesised, e.g. {@code (a = 1 or (not b = 2 and c in [1, 'x']))}:
     * shows precedence and how literals were read.
     */
    String structure() {
        StringBuilder b = new StringBuilder();
        expr.describe(b);
        return b.toString();
    }
}
