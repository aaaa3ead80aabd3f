// Alternative MongoDB wire-protocol server for tests (MONGO_IMPL=mongo-java-server in servers.sh):
// de.bwaldvogel:mongo-java-server with its in-memory backend. Usage: PortalMongoServer <host> <port>
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

public class PortalMongoServer {
  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 27017;
    MongoServer server = new MongoServer(new MemoryBackend());
    server.bind(host, port);
    Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
    System.err.println("mongo-java-server (memory backend) listening on " + host + ":" + port);
    Thread.currentThread().join();
  }
}
