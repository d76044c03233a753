import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * DynamoDB Local on 127.0.0.1 only (sensor_digest_tools.aws.dynamodb_local starts it): the engine
 * its own ServerRunner builds from the same arguments, whose Jetty server would listen on every
 * address (DynamoDB Local has no option to name one), given the loopback address before it starts.
 * Anything unexpected in the engine (a field renamed, another connector) stops it before it listens.
 */
public class LoopbackEngine {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer engine = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Connector[] connectors = ((Server) field.get(engine)).getConnectors();
        if (connectors.length == 0) {
            throw new IllegalStateException("DynamoDB Local has no connector to bind to 127.0.0.1");
        }
        for (Connector connector : connectors) {
            ((ServerConnector) connector).setHost("127.0.0.1");
        }
        engine.start();
    }
}
